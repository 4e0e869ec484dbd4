import type { Knex } from 'knex';
import type { AdapterContext, ReviewOutcome, SupplierAdapter } from '../shared/adapters/adapter';
import { UnknownOutcome } from '../shared/adapters/adapter';
import type { Logger } from '../shared/logger';
import { settlePendingTask, type PendingTaskAnswer } from '../shared/bookings/pending-tasks';
import { claimDueTasks, type SupplierTaskRow } from '../shared/suppliers/supplier-tasks';
import { isUnknown, type Unknown } from '../shared/suppliers/attempts';
import type { AfterApproval } from '../shared/creatives/review-execution';
import { claimReviewsAtSupplier, reviewAtSupplierOf, settleReviewAtSupplier } from '../shared/creatives/reviews-at-supplier';
import { withTimeout } from '../shared/timeout';
import { unlessDatabaseDown } from '../shared/db/batcher';

export interface TaskPollerOptions {
  intervalMs: number;
  timeoutMs: number;
  logger: Logger;
  /** What follows a creative's approval (given by the composition root). */
  afterApproval: AfterApproval;
  /** How long a supplier may hold a creative review undecided before a person takes it over. */
  reviewMaxWaitMs: number;
  /** How long a supplier may keep a booking or change it accepted unfinished (or unanswerable) before a person takes it over. */
  taskMaxWaitMs: number;
}

const hours = (ms: number) => Math.round(ms / 3_600_000);

/**
 * Asks each supplier about what it is still deciding, every interval: the bookings and in-flight
 * changes it is working on (a final answer moves the line, settlePendingTask; `unknown` sends it
 * to reconciliation)
 * and the creative reviews it holds (its verdict settles the review). A supplier that cannot be
 * asked is asked again an interval later. Claims are rows in PostgreSQL, so any number of worker
 * processes poll without asking twice, and a restart loses nothing.
 */
export function startTaskPoller(db: Knex, booking: SupplierAdapter[], reviewing: SupplierAdapter[], opts: TaskPollerOptions) {
  const polled = booking.filter((a) => a.tasks);
  const checked = reviewing.filter((a) => a.reviewer?.check);
  let running: Promise<number> | null = null;

  /**
   * Asks the supplier about each claimed row: its answer (or `unknown`, when it cannot say what
   * happened) is settled; a supplier that could not be asked, or an answer that could not be
   * recorded, is asked again an interval later.
   * Returns how many rows left the waiting state.
   */
  async function askEach<Row, Outcome>(
    rows: Row[],
    what: string,
    step: {
      context(row: Row): Record<string, unknown>;
      ask(row: Row): Promise<Outcome>;
      settle(row: Row, outcome: Outcome | Unknown): Promise<string>;
      waiting: string;
      /** How long the row has waited on the supplier, and how long it may. */
      waited(row: Row): { ms: number; maxMs: number };
    },
  ): Promise<number> {
    let settled = 0;
    for (const row of rows) {
      const context = step.context(row);
      let outcome: Outcome | Unknown;
      try {
        outcome = await withTimeout(step.ask(row), opts.timeoutMs, () => new Error(`no answer within ${opts.timeoutMs} ms`));
      } catch (err) {
        const { ms, maxMs } = step.waited(row);
        if (!(err instanceof UnknownOutcome) && ms <= maxMs) {
          opts.logger.warn(
            { ...context, err: { message: (err as Error).message } },
            `${what} could not be asked about; asking again later`,
          );
          continue;
        }
        // A supplier that cannot be asked past the wait is not waited on for ever: a person takes it.
        outcome = {
          kind: 'unknown',
          cause:
            err instanceof UnknownOutcome
              ? err.message
              : `The supplier could not be asked about it for ${hours(ms)} hours: ${(err as Error).message}`,
        };
      }
      let result: string;
      try {
        result = await step.settle(row, outcome);
      } catch (err) {
        // The database down or full: every other row would fail alike, after asking its supplier
        // for nothing. The round ends here; the claims bring the rows back an interval later.
        if (!unlessDatabaseDown(err)) throw err;
        // Its claim keeps it from being asked again before an interval has gone by; the rest of
        // the round is not held up by one row the database would not take.
        opts.logger.warn(
          { ...context, err: { message: (err as Error).message } },
          `${what}'s answer could not be recorded; asking again later`,
        );
        continue;
      }
      if (result !== step.waiting) settled++;
      opts.logger.info({ ...context, result }, `${what} asked about`);
    }
    return settled;
  }

  async function pollAdapter(adapter: SupplierAdapter): Promise<number> {
    const adapterKey = adapter.descriptor.key;
    const ids = (task: SupplierTaskRow) => ({ attemptId: task.attempt_id, bookingId: task.booking_id, lineId: task.line_id });
    const ctx: AdapterContext = { db, sandboxSlowMs: 0 };
    // A booking's task is asked about as a booking; a later operation's with the request its supplier was sent.
    const ask = (task: SupplierTaskRow): Promise<PendingTaskAnswer> =>
      task.operation
        ? adapter.tasks!.pollOperation({ taskId: task.task_id, ...ids(task), ...task.operation }, ctx)
        : adapter.tasks!.poll({ taskId: task.task_id, ...ids(task) }, ctx);
    return askEach(await claimDueTasks(db, adapterKey, opts.intervalMs), 'supplier task', {
      context: (task) => ({ adapterKey, taskId: task.task_id, lineId: task.line_id, operation: task.operation?.kind ?? 'book' }),
      ask,
      settle: (task, outcome) => {
        const waited = Date.now() - task.created_at.getTime();
        // Still working on it past the wait: the money stays reserved only until a person decides.
        const overdue =
          !isUnknown(outcome) && outcome.kind === 'pending' && waited > opts.taskMaxWaitMs
            ? {
                kind: 'unknown' as const,
                cause: `The supplier has not finished task ${task.task_id} in ${hours(waited)} hours (it says ${outcome.supplierStatus}).`,
              }
            : outcome;
        return settlePendingTask(db, ids(task), overdue, 'poll');
      },
      waiting: 'pending',
      waited: (task) => ({ ms: Date.now() - task.created_at.getTime(), maxMs: opts.taskMaxWaitMs }),
    });
  }

  async function checkReviews(adapter: SupplierAdapter): Promise<number> {
    const adapterKey = adapter.descriptor.key;
    return askEach(await claimReviewsAtSupplier(db, adapterKey, opts.intervalMs), 'creative review at supplier', {
      context: (review) => ({ adapterKey, reviewId: review.id }),
      ask: (review): Promise<ReviewOutcome> => adapter.reviewer!.check!(reviewAtSupplierOf(review), { db, sandboxSlowMs: 0 }),
      settle: (review, outcome) =>
        settleReviewAtSupplier(db, review.id, outcome, { afterApproval: opts.afterApproval, maxWaitMs: opts.reviewMaxWaitMs }),
      waiting: 'at-supplier',
      waited: (review) => ({ ms: Date.now() - (review.at_supplier_since ?? new Date()).getTime(), maxMs: opts.reviewMaxWaitMs }),
    });
  }

  // A round ends when every supplier's part of it has: one that could not claim its rows (the
  // database down) fails the round only once the others are done, so rounds never overlap.
  const pollNow = () => {
    running ??= Promise.allSettled([...polled.map(pollAdapter), ...checked.map(checkReviews)])
      .then((parts) => {
        const failed = parts.filter((p): p is PromiseRejectedResult => p.status === 'rejected');
        // Every failed part is told; the round fails with the first.
        for (const f of failed.slice(1))
          opts.logger.warn({ err: { message: (f.reason as Error).message } }, 'supplier task poll failed; will retry');
        if (failed[0]) throw failed[0].reason;
        return parts.reduce((n, p) => n + (p as PromiseFulfilledResult<number>).value, 0);
      })
      .finally(() => (running = null));
    return running;
  };
  const timer =
    polled.length || checked.length
      ? setInterval(() => {
          pollNow().catch((err) => opts.logger.warn({ err: { message: (err as Error).message } }, 'supplier task poll failed; will retry'));
        }, opts.intervalMs)
      : null;
  timer?.unref();
  return {
    pollNow,
    async stop() {
      if (timer) clearInterval(timer);
      await running?.catch(() => undefined);
    },
  };
}
