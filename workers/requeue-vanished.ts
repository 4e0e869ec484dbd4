import type { Knex } from 'knex';
import type { Logger } from '../shared/logger';
import { reopenInOutbox, type QueueFor } from '../shared/outbox/outbox';
import type { JobMessage } from '../shared/queues/jobs';
import { UNSENT_WORK } from './supplier-subjects';

/** Work that has waited this long in its first state without a job in Redis has lost its job. */
export const VANISHED_AFTER_MS = 10 * 60_000;

/**
 * A job can vanish from Redis without failing (a flush, a lost replica), leaving its work
 * `queued` for ever with no failed job for `retryUnsent` to find. Nothing was sent for such
 * work (UNSENT_WORK says which), so it is handed to the outbox again. The job id is the same
 * deterministic one, so if the job reappears meanwhile (a relay in flight), the second add is
 * a no-op. Keyset paging on id, so a backlog of merely late jobs never hides lost ones behind it.
 */
export async function requeueVanished(
  db: Knex,
  queueFor: QueueFor,
  logger: Logger,
  { now = new Date(), pageSize = 500 }: { now?: Date; pageSize?: number } = {},
): Promise<number> {
  const cutoff = new Date(now.getTime() - VANISHED_AFTER_MS);
  let requeued = 0;
  for (const kind of UNSENT_WORK) {
    let cursor: string | null = null;
    for (;;) {
      const q = kind.unsent(db).where(kind.sinceColumn, '<', cutoff);
      if (cursor) q.where(kind.idColumn, '>', cursor);
      const rows = (await q.orderBy(kind.idColumn).limit(pageSize)) as Array<Record<string, unknown>>;
      for (const row of rows) if (await requeueIfVanished(db, queueFor, logger, kind.message(row))) requeued++;
      if (rows.length < pageSize) break;
      cursor = String(rows[rows.length - 1]!.id);
    }
  }
  return requeued;
}

async function requeueIfVanished(db: Knex, queueFor: QueueFor, logger: Logger, message: JobMessage): Promise<boolean> {
  // Any job under this id (waiting, delayed, active, failed) is someone else's business.
  if (await queueFor(message.queue).getJob(message.jobId)) return false;
  if (!(await reopenInOutbox(db, message))) return false;
  logger.warn({ queue: message.queue, jobId: message.jobId }, 'requeued supplier work whose job had vanished before anything was sent');
  return true;
}
