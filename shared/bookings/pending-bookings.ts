import type { Knex } from 'knex';
import { SYSTEM } from '../auth/actor';
import type { TaskOutcome } from '../adapters/adapter';
import { recordLateOutcome, isUnknown, type Unknown } from '../suppliers/attempts';
import { finishTask, lockPendingTask, notePendingStatus } from '../suppliers/supplier-tasks';
import { appendEvent } from './booking-events';
import { applyBookingOutcome, type ExecutionResult } from './line-execution';
import { lockLine } from './line-transitions';

/** How a pending task's final outcome closes its attempt (as the booking call's own outcome would). */
function closeOf(outcome: Exclude<TaskOutcome, { kind: 'pending' }> | Unknown) {
  if (isUnknown(outcome)) return { status: 'unknown', providerReference: null, detail: { cause: outcome.cause } };
  return {
    status: outcome.kind,
    providerReference: outcome.kind === 'confirmed' ? outcome.providerReference : null,
    detail: outcome,
  };
}

/**
 * A pending booking's task answered (a poll, or the supplier's webhook): a final outcome moves the
 * line through the same step as an answer to the booking call; `pending` only notes the supplier's
 * word. Whichever of poll and webhook comes second finds the task done and changes nothing. A line
 * someone moved meanwhile (stopped, reconciled) keeps the answer as late evidence.
 */
export async function settlePendingBooking(
  db: Knex,
  task: { attemptId: string; bookingId: string; lineId: string },
  outcome: TaskOutcome | Unknown,
  source: 'poll' | 'webhook',
): Promise<ExecutionResult | 'already-settled'> {
  return db.transaction(async (trx) => {
    // The line's lock first, as every path that closes a line's attempt takes it.
    const locked = await lockLine(trx, task.bookingId, task.lineId);
    const pending = await lockPendingTask(trx, task.attemptId);
    if (!pending || !locked) return 'already-settled';
    if (!isUnknown(outcome) && outcome.kind === 'pending') {
      await notePendingStatus(trx, task.attemptId, outcome.supplierStatus);
      return 'pending';
    }
    const close = closeOf(outcome);
    await finishTask(trx, task.attemptId, close);
    const { line } = locked;
    if (line.status !== 'in-progress' || line.provider_attempt_id !== task.attemptId || line.operation !== 'book') {
      await recordLateOutcome(trx, task.attemptId, outcome);
      await appendEvent(trx, {
        bookingId: task.bookingId,
        lineId: task.lineId,
        action: 'line.late-supplier-answer',
        actor: SYSTEM,
        detail: { attemptId: task.attemptId, outcome, source },
      });
      return 'outcome-recorded-for-reconciliation';
    }
    return applyBookingOutcome(trx, task, { attemptId: task.attemptId }, outcome, locked);
  });
}
