import { Worker } from 'bullmq';
import type { RedisClient } from '../shared/redis';
import type { Knex } from 'knex';
import type { Logger } from '../shared/logger';
import { createRuleExtractor } from '../shared/personas/extractor';
import { warmNlp } from '../shared/personas/nlp';
import { runExtraction } from '../shared/personas/persona-store';
import { PERSONA_EXTRACT, PersonaExtractJobSchema } from '../shared/queues/jobs';
import { PERSONA_EXTRACT_QUEUE, queuePrefix } from '../shared/queues/names';

/** Turns briefs into personas. Extraction is pure and repeatable, so an ordinary retry is safe here. */
export function personaWorker(deps: { connection: RedisClient; prefix: string; db: Knex; logger: Logger }): Worker {
  const extractor = createRuleExtractor();
  // The language model loads once per process, at start, not on the first brief someone waits for.
  const { loadMs } = warmNlp();
  deps.logger.info({ loadMs }, 'persona language model loaded');
  return new Worker(
    PERSONA_EXTRACT_QUEUE,
    async (job) => {
      if (job.name !== PERSONA_EXTRACT) throw new Error(`unknown persona job ${job.name}`);
      const { requestId } = PersonaExtractJobSchema.parse(job.data);
      const result = await runExtraction(deps.db, extractor, requestId, String(job.id));
      deps.logger.info({ jobId: job.id, requestId, personaId: result.personaId }, 'persona extracted');
      return result;
    },
    { connection: deps.connection, prefix: queuePrefix(deps.prefix, PERSONA_EXTRACT_QUEUE), concurrency: 4 },
  );
}
