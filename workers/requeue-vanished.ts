import type { Knex } from 'knex';
import type { Logger } from '../shared/logger';
import type { OutboxMessage, QueueFor } from '../shared/outbox/outbox';
import { audienceSyncMessage, bookLineMessage, creativeReviewMessage } from '../shared/queues/jobs';

/** Work that has waited this long in its first state without a job in Redis has lost its job. */
export const VANISHED_AFTER_MS = 10 * 60_000;

interface WaitingKind {
  /** One page of candidates older than the cutoff, with ids after the cursor. */
  page(db: Knex, cutoff: Date, afterId: string | null, size: number): Promise<Array<Record<string, unknown>>>;
  message(row: Record<string, unknown>): OutboxMessage;
}

/** Keyset paging on id, so a backlog of merely late jobs never hides lost ones behind it. */
const after = (q: Knex.QueryBuilder, idColumn: string, afterId: string | null) => (afterId ? q.where(idColumn, '>', afterId) : q);

/**
 * Supplier work still in its first state with nothing sent: a booking line `queued` with no
 * booking attempt (workflow lines already handed to staff excluded), a creative review or an
 * audience sync attempt still `queued`.
 */
const KINDS: WaitingKind[] = [
  {
    page: (db, cutoff, cursor, size) =>
      after(
        db('booking_lines as l')
          .where('l.status', 'queued')
          .where('l.updated_at', '<', cutoff)
          .where((q) => q.whereNull('l.execution_method').orWhereNull('l.workflow_steps'))
          .whereNotExists(db('supplier_attempts as a').whereRaw('a.line_id = l.id').where('a.operation', 'book')),
        'l.id',
        cursor,
      )
        .orderBy('l.id')
        .limit(size)
        .select('l.id', 'l.booking_id', 'l.adapter_key'),
    message: (r) => bookLineMessage(String(r.adapter_key), { bookingId: String(r.booking_id), lineId: String(r.id) }),
  },
  {
    page: (db, cutoff, cursor, size) =>
      after(db('creative_reviews').where({ status: 'queued' }).where('created_at', '<', cutoff), 'id', cursor)
        .orderBy('id')
        .limit(size)
        .select('id', 'adapter_key'),
    message: (r) => creativeReviewMessage(String(r.adapter_key), { reviewId: String(r.id) }),
  },
  {
    page: (db, cutoff, cursor, size) =>
      after(db('cohort_sync_attempts').where({ status: 'queued' }).where('created_at', '<', cutoff), 'id', cursor)
        .orderBy('id')
        .limit(size)
        .select('id', 'cohort_id'),
    message: (r) => audienceSyncMessage({ cohortId: String(r.cohort_id), attemptId: String(r.id) }),
  },
];

/**
 * A job can vanish from Redis without failing (a flush, a lost replica), leaving its work
 * `queued` for ever with no failed job for `retryUnsent` to find. Nothing was sent for such
 * work, so it is handed to the outbox again. The job id is the same deterministic one, so if
 * the job reappears meanwhile (a relay in flight), the second add is a no-op.
 */
export async function requeueVanished(
  db: Knex,
  queueFor: QueueFor,
  logger: Logger,
  { now = new Date(), pageSize = 500 }: { now?: Date; pageSize?: number } = {},
): Promise<number> {
  const cutoff = new Date(now.getTime() - VANISHED_AFTER_MS);
  let requeued = 0;
  for (const kind of KINDS) {
    let cursor: string | null = null;
    for (;;) {
      const rows = await kind.page(db, cutoff, cursor, pageSize);
      for (const row of rows) if (await requeueIfVanished(db, queueFor, logger, kind.message(row))) requeued++;
      if (rows.length < pageSize) break;
      cursor = String(rows[rows.length - 1]!.id);
    }
  }
  return requeued;
}

async function requeueIfVanished(db: Knex, queueFor: QueueFor, logger: Logger, message: OutboxMessage): Promise<boolean> {
  // Any job under this id (waiting, delayed, active, failed) is someone else's business.
  if (await queueFor(message.queue).getJob(message.jobId)) return false;
  const [row] = await db('outbox')
    .insert({ queue: message.queue, job_name: message.jobName, job_id: message.jobId, payload: JSON.stringify(message.payload) })
    .onConflict('job_id')
    .merge({ relayed_at: null })
    // A row still waiting for the relay needs nothing from here.
    .whereNotNull('outbox.relayed_at')
    .returning('id');
  if (!row) return false;
  logger.warn({ queue: message.queue, jobId: message.jobId }, 'requeued supplier work whose job had vanished before anything was sent');
  return true;
}
