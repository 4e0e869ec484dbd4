import type { Knex } from 'knex';
import type { SupplierAdapter } from '../shared/adapters/adapter';
import { UnknownOutcome } from '../shared/adapters/adapter';
import type { Logger } from '../shared/logger';
import { settlePendingBooking } from '../shared/bookings/pending-bookings';
import { claimDueTasks } from '../shared/suppliers/supplier-tasks';
import { withTimeout } from '../shared/timeout';

export interface TaskPollerOptions {
  intervalMs: number;
  timeoutMs: number;
  logger: Logger;
}

/**
 * Asks each supplier about the bookings it is still working on, every interval: a final answer
 * moves the line (settlePendingBooking), `unknown` sends it to reconciliation, and a supplier that
 * cannot be asked is asked again an interval later. Claims are rows in PostgreSQL, so any number
 * of worker processes poll without asking twice, and a restart loses nothing.
 */
export function startTaskPoller(db: Knex, adapters: SupplierAdapter[], opts: TaskPollerOptions) {
  const polled = adapters.filter((a) => a.tasks);
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

  const pollNow = () => {
    running ??= Promise.all(polled.map(pollAdapter))
      .then((n) => n.reduce((a, b) => a + b, 0))
      .finally(() => (running = null));
    return running;
  };
  const timer = polled.length
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
