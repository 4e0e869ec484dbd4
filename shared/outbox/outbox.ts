import type { Knex } from 'knex';
import type { Queue } from 'bullmq';
import type { Logger } from '../logger';
import { Batcher, perPool, unlessDatabaseDown } from '../db/batcher';
import { rawPrepared } from '../db/knex';
import type { QueueProducers } from '../queues/producers';
import type { JobMessage } from '../queues/jobs';

/**
 * The transactional outbox: work to queue is written in the same transaction as the rows
 * it concerns, then relayed to BullMQ. A crash between commit and enqueue loses nothing
 * (the row waits for the next relay), and the deterministic job id means a second relay
 * of the same row cannot create a second job.
 */

const outboxRow = (m: JobMessage) => ({ queue: m.queue, job_name: m.jobName, job_id: m.jobId, payload: JSON.stringify(m.payload) });

/** The messages' outbox rows as an INSERT, to run or to embed in a larger statement (at least one message). */
export const outboxInsert = (trx: Knex, messages: readonly JobMessage[]) =>
  trx('outbox').insert(messages.map(outboxRow)).onConflict('job_id').ignore();

export async function enqueueInTransaction(trx: Knex, messages: JobMessage[]): Promise<void> {
  if (!messages.length) return;
  await outboxInsert(trx, messages);
}

/**
 * Hands a message to the relay again: reopens its relayed row, or writes it anew if pruned.
 * False when its row is still waiting for the relay, which needs nothing more.
 */
export async function reopenInOutbox(db: Knex, message: JobMessage): Promise<boolean> {
  const rows = await db('outbox')
    .insert(outboxRow(message))
    .onConflict('job_id')
    .merge({ relayed_at: null })
    .whereNotNull('outbox.relayed_at')
    .returning('id');
  return rows.length > 0;
}

/** Job options for supplier mutations: never retried by BullMQ; the attempt row decides what happens. */
export const SUPPLIER_JOB_OPTIONS = {
  attempts: 1,
  // Completed job ids are kept a day so a late re-relay of the same row is still deduplicated.
  removeOnComplete: { age: 24 * 3600, count: 100_000 },
  removeOnFail: { age: 7 * 24 * 3600 },
};

export type QueueFor = (name: string) => Queue;

/** Adds jobs to their queues together (QueueProducers.addAll). */
export type AddJobs = QueueProducers['addAll'];

// Whether any row waits: one read of the pending rows' partial index, outside any transaction.
const ANY_PENDING = 'select exists (select 1 from outbox where relayed_at is null) as pending';

/**
 * Moves pending outbox rows to their queues, oldest first. Rows are claimed with
 * SKIP LOCKED so several relays (every worker process's scheduler) never block each other.
 * Most of the time nothing waits (requests relay their own rows after commit), so a relay first
 * asks whether anything does, in one statement, and opens a transaction only when it does. A
 * row the probe misses, committed just after it, is the next relay's.
 */
export async function relayOutbox(db: Knex, addAll: AddJobs, batch = 100): Promise<number> {
  const [probe] = await rawPrepared<{ pending: boolean }>(db, ANY_PENDING, []);
  if (!probe?.pending) return 0;
  let relayed = 0;
  for (;;) {
    const n = await db.transaction(async (trx) => {
      const rows = await trx('outbox').whereNull('relayed_at').orderBy('id').limit(batch).forUpdate().skipLocked();
      await addJobs(
        addAll,
        rows.map((r) => ({ queue: r.queue, jobName: r.job_name, jobId: r.job_id, payload: r.payload })),
      );
      if (rows.length) {
        await trx('outbox')
          .whereIn(
            'id',
            rows.map((r) => r.id),
          )
          .update({ relayed_at: trx.fn.now() });
      }
      return rows.length;
    });
    relayed += n;
    if (n < batch) return relayed;
  }
}

/** Relayed rows are kept a week (well past BullMQ's one-day dedup window), then pruned. */
export const OUTBOX_RETENTION_MS = 7 * 24 * 60 * 60 * 1000;

export async function pruneRelayedOutbox(db: Knex, now = new Date()): Promise<number> {
  return db('outbox')
    .whereNotNull('relayed_at')
    .where('relayed_at', '<', new Date(now.getTime() - OUTBOX_RETENTION_MS))
    .delete();
}

/** Adds messages to their queues: one Redis round trip per queue; a job id already present is kept, as with add. */
async function addJobs(addAll: AddJobs, messages: readonly JobMessage[]): Promise<void> {
  await addAll(
    messages.map((m) => ({ queueName: m.queue, name: m.jobName, data: m.payload, opts: { jobId: m.jobId, ...SUPPLIER_JOB_OPTIONS } })),
  );
}

// One statement text whatever the batch's size, so it is prepared once per connection.
const MARK_RELAYED = `update outbox set relayed_at = now() where job_id = any(?::text[]) and relayed_at is null`;

// Concurrent requests mark their relayed rows together, one UPDATE for a batch of them.
const relayedMarks = perPool(
  (db) =>
    new Batcher(
      async (batches: ReadonlyArray<readonly string[]>) => {
        await rawPrepared(db, MARK_RELAYED, [batches.flat()]);
        return batches.map(() => undefined);
      },
      { concurrency: 2, maxSize: 50, retryAlone: unlessDatabaseDown },
    ),
);

/**
 * After a request's transaction has committed: hands the messages it wrote to their queues
 * now, so the work starts at once, and marks their rows relayed. A failure only delays them:
 * the rows wait for the workers' relay. Should that relay send the same rows meanwhile, the job
 * id keeps one job.
 */
export async function relayAfterCommit(
  db: Knex,
  addAll: AddJobs,
  log: Logger,
  context: Record<string, unknown>,
  messages: readonly JobMessage[],
): Promise<void> {
  if (!messages.length) return;
  try {
    await addJobs(addAll, messages);
    await relayedMarks(db).submit(messages.map((m) => m.jobId));
  } catch (err) {
    log.warn({ err: { message: (err as Error).message }, ...context }, 'outbox relay deferred to the workers');
  }
}
