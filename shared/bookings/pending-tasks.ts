import type { Knex } from 'knex';
import { SYSTEM } from '../auth/actor';
import type { OperationTaskOutcome, TaskOutcome } from '../adapters/adapter';
import { recordLateOutcome, isUnknown, type Unknown } from '../suppliers/attempts';
import { finishTask, lockPendingTask, notePendingStatus, type SupplierTaskRow } from '../suppliers/supplier-tasks';
import { appendEvent } from './booking-events';
import { lockLineOperation, type HeldOperation } from './lines/operation-store';
import { operationStates } from './lines/state';
import { lockLine, type LockedLine } from './lines/store';
import { answerClose } from './lines/kind';
import type { ExecutionResult } from './lines/execution';
import { applyTaskAnswer } from './lines/flow';

/** A task's answer: a booking's (confirmed, rejected, ...) or a later operation's (applied, refused). */
export type PendingTaskAnswer = TaskOutcome | OperationTaskOutcome | Unknown;

const OPERATION_ANSWERS = new Set(['applied', 'refused', 'pending']);
const BOOKING_ANSWERS = new Set(['confirmed', 'rejected', 'workflow', 'pending']);

/** An answer of the wrong sort for its task (a booking's task answered `applied`) says nothing definite: unknown. */
function answerFor(task: SupplierTaskRow, outcome: PendingTaskAnswer): PendingTaskAnswer {
  if (isUnknown(outcome) || (task.operation_id ? OPERATION_ANSWERS : BOOKING_ANSWERS).has(outcome.kind)) return outcome;
  return {
    kind: 'unknown',
    cause: `The supplier answered task ${task.task_id} ${outcome.kind}, which is no answer to a ${task.operation?.kind ?? 'booking'}.`,
  };
}

/** Whether the line still waits on the task's attempt: moved by nobody else since the supplier took the request. */
function stillWaiting(locked: LockedLine, task: SupplierTaskRow, op: HeldOperation | undefined): boolean {
  const { line } = locked;
  if (line.provider_attempt_id !== task.attempt_id) return false;
  if (!task.operation_id) return line.status === 'in-progress' && line.operation === 'book';
  return (
    !!op && line.operation_id === op.id && op.status === 'in-flight' && line.status === operationStates(op.kind, op.from_status).inFlight
  );
}

/**
 * A pending task answered (a poll, or the supplier's webhook), a booking's or a later operation's:
 * a final outcome moves the line through the same step as an answer to the call itself
 * (`applyTaskAnswer`, lines/flow.ts), and closes the attempt as that answer would have;
 * `pending` only notes the supplier's word. Whichever of poll and webhook comes second finds the
 * task done and changes nothing. A line someone moved meanwhile (stopped, reconciled) keeps the
 * answer as late evidence.
 */
export async function settlePendingTask(
  db: Knex,
  ids: { attemptId: string; bookingId: string; lineId: string },
  answer: PendingTaskAnswer,
  source: 'poll' | 'webhook',
): Promise<ExecutionResult | 'already-settled'> {
  return db.transaction(async (trx) => {
    // The line's lock first, as every path that closes a line's attempt takes it; then its operation's.
    const locked = await lockLine(trx, ids.bookingId, ids.lineId);
    const task = await lockPendingTask(trx, ids.attemptId);
    if (!task || !locked) return 'already-settled';
    const outcome = answerFor(task, answer);
    if (!isUnknown(outcome) && outcome.kind === 'pending') {
      await notePendingStatus(trx, ids.attemptId, outcome.supplierStatus);
      return 'pending';
    }
    await finishTask(trx, ids.attemptId, answerClose(outcome));
    const op = task.operation_id ? await lockLineOperation(trx, task.operation_id) : undefined;
    if (!stillWaiting(locked, task, op)) {
      await recordLateOutcome(trx, ids.attemptId, outcome);
      await appendEvent(trx, {
        bookingId: ids.bookingId,
        lineId: ids.lineId,
        action: 'line.late-supplier-answer',
        actor: SYSTEM,
        detail: { attemptId: ids.attemptId, ...(task.operation ? { operation: task.operation.kind } : {}), outcome, source },
      });
      return 'outcome-recorded-for-reconciliation';
    }
    const start = { attemptId: ids.attemptId, request: task.operation?.request ?? null };
    return applyTaskAnswer(trx, { ...ids, ...(op ? { operationId: op.id } : {}) }, start, outcome, { locked, op: op ?? null });
  });
}
