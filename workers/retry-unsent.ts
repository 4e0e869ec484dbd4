import type { Queue } from 'bullmq';
import type { Knex } from 'knex';
import type { Logger } from '../shared/logger';
import type { UnsentWork } from '../shared/suppliers/unsent-work';
import { UNSENT_WORK } from './supplier-subjects';

/**
 * Supplier jobs are never retried, because a retry could send twice. A job that failed
 * before its attempt was opened, though, sent nothing (a database blip, say); left alone,
 * its line would wait in `queued` for ever. This finds those jobs and retries them, and
 * only them: the work must still be in its first state with nothing sent (UNSENT_WORK).
 * Pages through every failed job of every such queue, oldest first. BullMQ lists failed
 * jobs newest first, and a retried job leaves the list, so pages are read from the end:
 * what a retry removes has already been looked at, and nothing is skipped however many failed.
 */
export async function retryUnsent(
  db: Knex,
  queueFor: (name: string) => Queue,
  logger: Logger,
  { pageSize = 200 }: { pageSize?: number } = {},
): Promise<number> {
  const byJob = new Map(UNSENT_WORK.map((w) => [w.jobName, w]));
  let retried = 0;
  for (const name of new Set(UNSENT_WORK.flatMap((w) => w.queues))) {
    const queue = queueFor(name);
    // A job retried here that fails again meanwhile joins the front of the list and shifts the
    // rest: it waits for the next run rather than being retried twice in one.
    const seen = new Set<string>();
    for (let end = (await queue.getFailedCount()) - 1; end >= 0; end -= pageSize) {
      const page = await queue.getFailed(Math.max(0, end - pageSize + 1), end);
      for (const job of page.reverse()) {
        if (!job.id || seen.has(job.id)) continue;
        seen.add(job.id);
        const kind = byJob.get(job.name);
        if (kind && (await nothingSent(db, kind, job.data as Record<string, string>))) {
          await job.retry('failed');
          retried++;
          logger.warn({ queue: name, jobId: job.id }, 'retried a supplier job that failed before sending anything');
        }
      }
    }
  }
  return retried;
}

async function nothingSent(db: Knex, kind: UnsentWork, data: Record<string, string>): Promise<boolean> {
  const id = kind.idOf(data);
  return !!id && !!(await kind.unsent(db).where(kind.idColumn, id).first());
}
