import type { Knex } from 'knex';
import type { Logger } from '../shared/logger';
import { reopenInOutbox, type QueueFor } from '../shared/outbox/outbox';
import type { JobMessage } from '../shared/queues/jobs';
import {
  audienceSyncMessage,
  bookLineMessage,
  browserJobMessage,
  creativeReviewMessage,
  lineOperationJobId,
  lineOperationMessage,
} from '../shared/queues/jobs';

/** Work that has waited this long in its first state without a job in Redis has lost its job. */
export const VANISHED_AFTER_MS = 10 * 60_000;

interface WaitingKind {
  /** One page of candidates older than the cutoff, with ids after the cursor. */
  page(db: Knex, cutoff: Date, afterId: string | null, size: number): Promise<Array<Record<string, unknown>>>;
  message(row: Record<string, unknown>): JobMessage;
}

/** Keyset paging on id, so a backlog of merely late jobs never hides lost ones behind it. */
const pageOf = (q: Knex.QueryBuilder, idColumn: string, afterId: string | null, size: number) =>
  (afterId ? q.where(idColumn, '>', afterId) : q).orderBy(idColumn).limit(size);

/** Reviews and sync attempts: a row still `queued` since before the cutoff. */
const queuedSince =
  (table: string, ...columns: string[]): WaitingKind['page'] =>
  (db, cutoff, cursor, size) =>
    pageOf(db(table).where({ status: 'queued' }).where('created_at', '<', cutoff), 'id', cursor, size).select('id', ...columns);

/**
 * Supplier work still in its first state with nothing sent: a booking line `queued` with no
 * booking attempt (workflow lines already handed to staff excluded), an operation asked of a
 * booked line still `requested`, a creative review or an audience sync attempt still `queued`.
 */
const KINDS: WaitingKind[] = [
  {
    page: (db, cutoff, cursor, size) =>
      pageOf(
        db('booking_lines as l')
          .where('l.status', 'queued')
          .where('l.operation', 'book')
          .where('l.updated_at', '<', cutoff)
          .where((q) => q.whereNull('l.execution_method').orWhereNull('l.workflow_steps'))
          .whereNotExists(db('supplier_attempts as a').whereRaw('a.line_id = l.id').where('a.operation', 'book')),
        'l.id',
        cursor,
        size,
      ).select('l.id', 'l.booking_id', 'l.adapter_key'),
    message: (r) => bookLineMessage(String(r.adapter_key), { bookingId: String(r.booking_id), lineId: String(r.id) }),
  },
  {
    // An operation asked of a booked line, still requested, with no attempt under its job (nor handed to staff).
    page: (db, cutoff, cursor, size) =>
      pageOf(
        db('line_operations as o')
          .join('booking_lines as l', 'l.id', 'o.line_id')
          .where('o.status', 'requested')
          .where('o.created_at', '<', cutoff)
          .whereRaw('l.operation_id = o.id')
          .where((q) => q.whereNull('l.execution_method').orWhereNull('l.workflow_steps'))
          .whereNotExists(db('supplier_attempts as a').whereRaw(`a.job_id = '${lineOperationJobId('')}' || o.id::text`)),
        'o.id',
        cursor,
        size,
      ).select('o.id', 'o.booking_id', 'o.line_id', 'l.adapter_key'),
    message: (r) =>
      lineOperationMessage(String(r.adapter_key), {
        bookingId: String(r.booking_id),
        lineId: String(r.line_id),
        operationId: String(r.id),
      }),
  },
  {
    page: queuedSince('creative_reviews', 'adapter_key'),
    message: (r) => creativeReviewMessage(String(r.adapter_key), { reviewId: String(r.id) }),
  },
  {
    page: queuedSince('cohort_sync_attempts', 'cohort_id'),
    message: (r) => audienceSyncMessage({ cohortId: String(r.cohort_id), attemptId: String(r.id) }),
  },
  {
    page: queuedSince('browser_jobs'),
    message: (r) => browserJobMessage({ browserJobId: String(r.id) }),
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

async function requeueIfVanished(db: Knex, queueFor: QueueFor, logger: Logger, message: JobMessage): Promise<boolean> {
  // Any job under this id (waiting, delayed, active, failed) is someone else's business.
  if (await queueFor(message.queue).getJob(message.jobId)) return false;
  if (!(await reopenInOutbox(db, message))) return false;
  logger.warn({ queue: message.queue, jobId: message.jobId }, 'requeued supplier work whose job had vanished before anything was sent');
  return true;
}
