import type { Knex } from 'knex';
import type { Config } from '../shared/config/config';
import type { Logger } from '../shared/logger';
import type { QueueFor } from '../shared/outbox/outbox';
import { sweepStuckAttempts } from '../shared/suppliers/stuck-attempts';
import { SUBJECT_HANDLERS } from './supplier-subjects';

/** Job states in which a worker may still record the attempt's outcome itself. */
const LIVE = new Set(['active', 'waiting', 'delayed', 'prioritized', 'waiting-children']);

/**
 * Attempts open for longer than a call can take (the supplier timeout plus a grace period)
 * whose job can no longer finish them go to reconciliation (shared/suppliers/stuck-attempts.ts).
 */
export function sweepStuck(
  db: Knex,
  queueFor: QueueFor,
  logger: Logger,
  config: Pick<Config, 'SUPPLIER_TIMEOUT_MS' | 'ATTEMPT_STUCK_GRACE_MS'>,
  now = new Date(),
): Promise<number> {
  const olderThan = new Date(now.getTime() - config.SUPPLIER_TIMEOUT_MS - config.ATTEMPT_STUCK_GRACE_MS);
  const isJobLive = async (queue: string, jobId: string) => {
    const job = await queueFor(queue).getJob(jobId);
    return job ? LIVE.has(await job.getState()) : false;
  };
  return sweepStuckAttempts(db, SUBJECT_HANDLERS, isJobLive, { olderThan, logger });
}
