import { Worker } from 'bullmq';
import type { RedisClient } from '../shared/redis';
import type { Knex } from 'knex';
import type { Config } from '../shared/config/config';
import type { Logger } from '../shared/logger';
import { supplierMutationOptions } from './mutation-options';
import { executeAudienceSync } from '../shared/audiences/sync-execution';
import { AUDIENCE_SYNC, AudienceSyncJobSchema } from '../shared/queues/jobs';
import { AUDIENCE_SYNC_QUEUE } from '../shared/queues/names';
import { audienceSupplierFor } from './adapters/audience-sandbox';

/**
 * Consumes the audience-sync queue. Like supplier bookings, a sync is never retried (attempts: 1
 * on the job); a job whose worker died is re-delivered once (maxStalledCount: 1) so that the new
 * delivery finds the in-flight attempt and sends it to resolution instead of syncing again.
 */
export function audienceWorker(deps: { connection: RedisClient; config: Config; db: Knex; logger: Logger }): Worker {
  const { config, db } = deps;
  const log = deps.logger.child({ queue: AUDIENCE_SYNC_QUEUE });
  return new Worker(
    AUDIENCE_SYNC_QUEUE,
    async (job) => {
      if (job.name !== AUDIENCE_SYNC) throw new Error(`unknown audience job ${job.name}`);
      const data = AudienceSyncJobSchema.parse(job.data);
      const result = await executeAudienceSync(db, audienceSupplierFor, data, {
        timeoutMs: config.SUPPLIER_TIMEOUT_MS,
        context: { db, sandboxSlowMs: config.SANDBOX_SLOW_MS },
        logger: log,
      });
      log.info({ jobId: job.id, cohortId: data.cohortId, attemptId: data.attemptId, result }, 'audience sync handled');
      return { result };
    },
    supplierMutationOptions(deps.connection, AUDIENCE_SYNC_QUEUE, config, 2),
  );
}
