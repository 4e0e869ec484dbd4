import { Worker } from 'bullmq';
import type { RedisClient } from '../shared/redis';
import type { Knex } from 'knex';
import { assetDirOf, type Config } from '../shared/config/config';
import type { Logger } from '../shared/logger';
import { supplierMutationOptions } from './mutation-options';
import type { SupplierAdapter } from '../shared/adapters/adapter';
import { executeReview } from '../shared/creatives/review-execution';
import { refreshStagedLines } from '../shared/bookings/staged-lines';
import { CREATIVE_REVIEW, CreativeReviewJobSchema } from '../shared/queues/jobs';
import { creativeReviewQueueName } from '../shared/queues/names';

/** One supplier's creative-review queue: like supplier bookings, never retried, re-delivered once to be reconciled. */
export function creativeReviewWorker(
  adapter: SupplierAdapter,
  deps: { connection: RedisClient; config: Config; db: Knex; logger: Logger },
): Worker {
  const { config, db } = deps;
  const log = deps.logger.child({ adapterKey: adapter.descriptor.key, queue: 'creative-review' });
  const reviewer = adapter.reviewer;
  if (!reviewer) throw new Error(`adapter ${adapter.descriptor.key} does not review creatives`);
  return new Worker(
    creativeReviewQueueName(adapter.descriptor.key),
    async (job): Promise<unknown> => {
      if (job.name !== CREATIVE_REVIEW) throw new Error(`unknown review job ${job.name}`);
      const { reviewId } = CreativeReviewJobSchema.parse(job.data);
      const result = await executeReview(db, reviewer, reviewId, {
        assetDir: assetDirOf(config),
        timeoutMs: config.SUPPLIER_TIMEOUT_MS,
        lateAnswerMs: config.SUPPLIER_LATE_ANSWER_MS,
        context: { db, sandboxSlowMs: config.SANDBOX_SLOW_MS },
        logger: log,
        afterApproval: refreshStagedLines,
      });
      log.info({ jobId: job.id, reviewId, result }, 'creative review handled');
      return { result };
    },
    supplierMutationOptions(deps.connection, creativeReviewQueueName(adapter.descriptor.key), config, 2),
  );
}
