import type { RedisClient } from '../shared/redis';
import type { WorkerOptions } from 'bullmq';
import type { Config } from '../shared/config/config';
import { queuePrefix } from '../shared/queues/names';

/**
 * Options for queues whose jobs change things at a supplier (bookings, reviews, audience
 * syncs). Jobs carry attempts: 1, so BullMQ never retries them; a job whose worker died is
 * re-delivered once, after WORKER_LOCK_DURATION_MS, so the new delivery finds its open
 * attempt and hands it to reconciliation instead of calling again.
 */
export function supplierMutationOptions(connection: RedisClient, queue: string, config: Config, concurrency: number): WorkerOptions {
  return {
    connection,
    prefix: queuePrefix(config.REDIS_PREFIX, queue),
    concurrency,
    lockDuration: config.WORKER_LOCK_DURATION_MS,
    stalledInterval: config.WORKER_STALLED_INTERVAL_MS,
    maxStalledCount: 1,
  };
}
