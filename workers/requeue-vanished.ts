import type { Knex } from 'knex';
import type { Logger } from '../shared/logger';
import type { OutboxMessage, QueueFor } from '../shared/outbox/outbox';
import { audienceSyncMessage, bookLineMessage, creativeReviewMessage } from '../shared/queues/jobs';

/** Work that has waited this long in its first state without a job in Redis has lost its job. */
export const VANISHED_AFTER_MS = 10 * 60_000;
const BATCH = 500;

/**
 * Supplier work still in its first state, older than the cutoff, with nothing sent: a booking
 * line `queued` with no booking attempt (workflow lines already handed to staff excluded),
 * a creative review or an audience sync attempt still `queued`.
 */
async function waitingWork(db: Knex, cutoff: Date): Promise<OutboxMessage[]> {
  const lines = await db('booking_lines as l')
    .where('l.status', 'queued')
    .where('l.updated_at', '<', cutoff)
    .where((q) => q.whereNull('l.execution_method').orWhereNull('l.workflow_steps'))
    .whereNotExists(db('supplier_attempts as a').whereRaw('a.line_id = l.id').where('a.operation', 'book'))
    .orderBy('l.updated_at')
    .limit(BATCH)
    .select('l.id', 'l.booking_id', 'l.adapter_key');
  const reviews = await db('creative_reviews')
    .where({ status: 'queued' })
    .where('created_at', '<', cutoff)
    .orderBy('created_at')
    .limit(BATCH)
    .select('id', 'adapter_key');
  const syncs = await db('cohort_sync_attempts')
    .where({ status: 'queued' })
    .where('created_at', '<', cutoff)
    .orderBy('created_at')
    .limit(BATCH)
    .select('id', 'cohort_id');
  return [
    ...lines.map((l) => bookLineMessage(l.adapter_key, { bookingId: l.booking_id, lineId: l.id })),
    ...reviews.map((r) => creativeReviewMessage(r.adapter_key, { reviewId: r.id })),
    ...syncs.map((s) => audienceSyncMessage({ cohortId: s.cohort_id, attemptId: s.id })),
  ];
}

/**
 * A job can vanish from Redis without failing (a flush, a lost replica), leaving its work
 * `queued` for ever with no failed job for `retryUnsent` to find. Nothing was sent for such
 * work, so it is handed to the outbox again. The job id is the same deterministic one, so if
 * the job reappears meanwhile (a relay in flight), the second add is a no-op.
 */
export async function requeueVanished(db: Knex, queueFor: QueueFor, logger: Logger, now = new Date()): Promise<number> {
  let requeued = 0;
  for (const message of await waitingWork(db, new Date(now.getTime() - VANISHED_AFTER_MS))) {
    // Any job under this id (waiting, delayed, active, failed) is someone else's business.
    if (await queueFor(message.queue).getJob(message.jobId)) continue;
    const [row] = await db('outbox')
      .insert({ queue: message.queue, job_name: message.jobName, job_id: message.jobId, payload: JSON.stringify(message.payload) })
      .onConflict('job_id')
      .merge({ relayed_at: null })
      // A row still waiting for the relay needs nothing from here.
      .whereNotNull('outbox.relayed_at')
      .returning('id');
    if (row) {
      requeued++;
      logger.warn({ queue: message.queue, jobId: message.jobId }, 'requeued supplier work whose job had vanished before anything was sent');
    }
  }
  return requeued;
}
