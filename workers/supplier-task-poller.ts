import type { Knex } from 'knex';
import type { ReviewOutcome, SupplierAdapter } from '../shared/adapters/adapter';
import { UnknownOutcome } from '../shared/adapters/adapter';
import type { Logger } from '../shared/logger';
import { settlePendingBooking } from '../shared/bookings/pending-bookings';
import { claimDueTasks } from '../shared/suppliers/supplier-tasks';
import type { Unknown } from '../shared/suppliers/attempts';
import type { AfterApproval } from '../shared/creatives/review-execution';
import { claimReviewsAtSupplier, reviewAtSupplierOf, settleReviewAtSupplier } from '../shared/creatives/reviews-at-supplier';
import { withTimeout } from '../shared/timeout';

export interface TaskPollerOptions {
  intervalMs: number;
  timeoutMs: number;
  logger: Logger;
  /** What follows a creative's approval (given by the composition root). */
  afterApproval: AfterApproval;
  /** How long a supplier may hold a creative review undecided before a person takes it over. */
  reviewMaxWaitMs: number;
}

/**
 * Asks each supplier about what it is still deciding, every interval: the bookings it is working
 * on (a final answer moves the line, settlePendingBooking; `unknown` sends it to reconciliation)
 * and the creative reviews it holds (its verdict settles the review). A supplier that cannot be
 * asked is asked again an interval later. Claims are rows in PostgreSQL, so any number of worker
 * processes poll without asking twice, and a restart loses nothing.
 */
export function startTaskPoller(db: Knex, booking: SupplierAdapter[], reviewing: SupplierAdapter[], opts: TaskPollerOptions) {
  const polled = booking.filter((a) => a.tasks);
  const checked = reviewing.filter((a) => a.reviewer?.check);
  let running: Promise<number> | null = null;

  async function pollAdapter(adapter: SupplierAdapter): Promise<number> {
    const key = adapter.descriptor.key;
    const due = await claimDueTasks(db, key, opts.intervalMs);
    let settled = 0;
    for (const task of due) {
      const ids = { attemptId: task.attempt_id, bookingId: task.booking_id, lineId: task.line_id };
      const context = { adapterKey: key, taskId: task.task_id, lineId: task.line_id };
      try {
        const outcome = await withTimeout(
          adapter.tasks!.poll({ taskId: task.task_id, ...ids }, { db, sandboxSlowMs: 0 }),
          opts.timeoutMs,
          () => new Error(`no answer within ${opts.timeoutMs} ms`),
        );
        const result = await settlePendingBooking(db, ids, outcome, 'poll');
        if (result !== 'pending') settled++;
        opts.logger.info({ ...context, result }, 'supplier task polled');
      } catch (err) {
        if (err instanceof UnknownOutcome) {
          await settlePendingBooking(db, ids, { kind: 'unknown', cause: err.message }, 'poll');
          settled++;
          continue;
        }
        opts.logger.warn({ ...context, err: { message: (err as Error).message } }, 'supplier task could not be polled; asking again later');
      }
    }
    return settled;
  }

  async function checkReviews(adapter: SupplierAdapter): Promise<number> {
    const key = adapter.descriptor.key;
    const due = await claimReviewsAtSupplier(db, key, opts.intervalMs);
    let settled = 0;
    for (const row of due) {
      const context = { adapterKey: key, reviewId: row.id };
      let outcome: ReviewOutcome | Unknown;
      try {
        outcome = await withTimeout(
          adapter.reviewer!.check!(reviewAtSupplierOf(row), { db, sandboxSlowMs: 0 }),
          opts.timeoutMs,
          () => new Error(`no answer within ${opts.timeoutMs} ms`),
        );
      } catch (err) {
        if (!(err instanceof UnknownOutcome)) {
          opts.logger.warn(
            { ...context, err: { message: (err as Error).message } },
            'creative review could not be checked; asking again later',
          );
          continue;
        }
        outcome = { kind: 'unknown', cause: err.message };
      }
      const result = await settleReviewAtSupplier(db, row.id, outcome, {
        afterApproval: opts.afterApproval,
        maxWaitMs: opts.reviewMaxWaitMs,
      });
      if (result !== 'at-supplier') settled++;
      opts.logger.info({ ...context, result }, 'creative review at supplier checked');
    }
    return settled;
  }

  const pollNow = () => {
    running ??= Promise.all([...polled.map(pollAdapter), ...checked.map(checkReviews)])
      .then((n) => n.reduce((a, b) => a + b, 0))
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
