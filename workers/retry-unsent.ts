import type { Queue } from 'bullmq';
import type { Knex } from 'knex';
import type { Logger } from '../shared/logger';
import { AUDIENCE_SYNC, BOOK_LINE, CREATIVE_REVIEW, LINE_OPERATION, RUN_BROWSER_JOB, lineOperationJobId } from '../shared/queues/jobs';
import { AUDIENCE_SYNC_QUEUE, BROWSER_JOBS_QUEUE, CREATIVE_REVIEW_QUEUES, SUPPLIER_QUEUES } from '../shared/queues/names';

/**
 * Supplier jobs are never retried, because a retry could send twice. A job that failed
 * before its attempt was opened, though, sent nothing (a database blip, say); left alone,
 * its line would wait in `queued` for ever. This finds those jobs and retries them, and
 * only them: the work must still be in its first state with no attempt on record.
 */
const NOTHING_SENT: Record<string, (db: Knex, data: Record<string, string>) => Promise<boolean>> = {
  [BOOK_LINE]: async (db, d) => {
    const line = await db('booking_lines').where({ id: d.lineId }).first('status', 'execution_method', 'workflow_steps');
    const attempts = await db('supplier_attempts').where({ line_id: d.lineId, operation: 'book' }).first('id');
    return line?.status === 'queued' && !attempts && !(line.execution_method && line.workflow_steps);
  },
  [LINE_OPERATION]: async (db, d) => {
    const op = await db('line_operations as o')
      .join('booking_lines as l', 'l.id', 'o.line_id')
      .where('o.id', d.operationId)
      .first('o.status', 'l.operation_id', 'l.execution_method', 'l.workflow_steps');
    const attempts = await db('supplier_attempts')
      .where({ job_id: lineOperationJobId(d.operationId) })
      .first('id');
    return op?.status === 'requested' && op.operation_id === d.operationId && !attempts && !(op.execution_method && op.workflow_steps);
  },
  [CREATIVE_REVIEW]: async (db, d) => (await db('creative_reviews').where({ id: d.reviewId }).first('status'))?.status === 'queued',
  [AUDIENCE_SYNC]: async (db, d) => (await db('cohort_sync_attempts').where({ id: d.attemptId }).first('status'))?.status === 'queued',
  // A browser job that never started (still queued) opened nothing; one that started is never run again.
  [RUN_BROWSER_JOB]: async (db, d) => (await db('browser_jobs').where({ id: d.browserJobId }).first('status'))?.status === 'queued',
};

/**
 * Pages through every failed job of every supplier queue, oldest first. BullMQ lists failed
 * jobs newest first, and a retried job leaves the list, so pages are read from the end:
 * what a retry removes has already been looked at, and nothing is skipped however many failed.
 */
export async function retryUnsent(
  db: Knex,
  queueFor: (name: string) => Queue,
  logger: Logger,
  { pageSize = 200 }: { pageSize?: number } = {},
): Promise<number> {
  let retried = 0;
  for (const name of [...SUPPLIER_QUEUES, ...CREATIVE_REVIEW_QUEUES, AUDIENCE_SYNC_QUEUE, BROWSER_JOBS_QUEUE]) {
    const queue = queueFor(name);
    // A job retried here that fails again meanwhile joins the front of the list and shifts the
    // rest: it waits for the next run rather than being retried twice in one.
    const seen = new Set<string>();
    for (let end = (await queue.getFailedCount()) - 1; end >= 0; end -= pageSize) {
      const page = await queue.getFailed(Math.max(0, end - pageSize + 1), end);
      for (const job of page.reverse()) {
        if (!job.id || seen.has(job.id)) continue;
        seen.add(job.id);
        const safe = NOTHING_SENT[job.name];
        if (safe && (await safe(db, job.data as Record<string, string>))) {
          await job.retry('failed');
          retried++;
          logger.warn({ queue: name, jobId: job.id }, 'retried a supplier job that failed before sending anything');
        }
      }
    }
  }
  return retried;
}
