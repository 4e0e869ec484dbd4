import { Worker } from 'bullmq';
import type { RedisClient } from '../shared/redis';
import type { Knex } from 'knex';
import type { Logger } from '../shared/logger';
import type { Config } from '../shared/config/config';
import { createExtractionEngine } from '../shared/personas/extraction-engine';
import { warmNlp } from '../shared/personas/nlp';
import { runExtraction } from '../shared/personas/persona-store';
import { PERSONA_EXTRACT, PersonaExtractJobSchema } from '../shared/queues/jobs';
import { PERSONA_EXTRACT_QUEUE, queuePrefix } from '../shared/queues/names';

/**
 * Turns briefs into personas. Extraction only reads (a model's answer included) and the store keeps
 * the first persona of a request, so an ordinary retry is safe here.
 */
export function personaWorker(deps: { connection: RedisClient; prefix: string; db: Knex; logger: Logger; config: Config }): Worker {
  const { PERSONA_MODEL_BASE_URL: baseUrl, PERSONA_MODEL_NAME: model } = deps.config;
  const settings =
    baseUrl && model
      ? { baseUrl, model, apiKey: deps.config.PERSONA_MODEL_API_KEY, timeoutMs: deps.config.PERSONA_MODEL_TIMEOUT_MS }
      : undefined;
  // The key is never logged; the host and model say which service answers.
  if (settings) deps.logger.info({ host: new URL(settings.baseUrl).host, model }, 'persona extraction asks a model, rules as fallback');
  const engine = createExtractionEngine(settings, (reason) =>
    deps.logger.warn({ reason, model }, 'persona model gave no usable answer; the rules answered'),
  );
  // The language model loads once per process, at start, not on the first brief someone waits for.
  const { loadMs } = warmNlp();
  deps.logger.info({ loadMs }, 'persona language model loaded');
  return new Worker(
    PERSONA_EXTRACT_QUEUE,
    async (job) => {
      if (job.name !== PERSONA_EXTRACT) throw new Error(`unknown persona job ${job.name}`);
      const { requestId } = PersonaExtractJobSchema.parse(job.data);
      const result = await runExtraction(deps.db, engine, requestId, String(job.id));
      deps.logger.info({ jobId: job.id, requestId, personaId: result.personaId, method: result.generation.method }, 'persona extracted');
      return result;
    },
    { connection: deps.connection, prefix: queuePrefix(deps.prefix, PERSONA_EXTRACT_QUEUE), concurrency: 4 },
  );
}
