import type { Knex } from 'knex';
import type { JobMessage } from '../queues/jobs';

/**
 * One kind of supplier work that waits in a first state before anything is sent (a line to
 * book, an operation asked of a line, a creative review, an audience sync, a browser job). Its
 * job is never retried blindly, because a retry could send twice; the sweeps that recover lost
 * work (`retry-unsent`, `requeue-vanished`) ask each kind, through one rule, whether nothing was sent.
 */
export interface UnsentWork {
  /** The job that carries it, and the queues that job runs on. */
  jobName: string;
  queues: readonly string[];
  /** The row a job's data names. */
  idOf(data: Record<string, string>): string;
  /**
   * Its rows still in their first state with nothing sent: selects `id`, `since` (when it began
   * waiting) and what `message` needs; `idColumn` names `id` for filtering and keyset paging.
   */
  unsent(db: Knex): Knex.QueryBuilder;
  idColumn: string;
  sinceColumn: string;
  message(row: Record<string, unknown>): JobMessage;
}

/** A row of `table` still `queued`: a review, a sync attempt or a browser job, none of which sends before it leaves that state. */
export const queuedRows = (
  table: string,
  columns: string[],
  job: { jobName: string; queues: readonly string[]; idOf: UnsentWork['idOf']; message: UnsentWork['message'] },
): UnsentWork => ({
  ...job,
  unsent: (db) =>
    db(table)
      .where('status', 'queued')
      .select('id', ...columns),
  idColumn: 'id',
  sinceColumn: 'created_at',
});
