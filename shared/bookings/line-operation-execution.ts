import type { Knex } from 'knex';
import { SYSTEM } from '../auth/actor';
import type { AdapterContext, LineOperationOutcome, LineOperationRequest, SupplierAdapter } from '../adapters/adapter';
import { toMinor } from '../db/knex';
import { dateOnly } from '../dates';
import { lineOperationJobId, type LineOperationJob } from '../queues/jobs';
import { isUnknown, newAttemptId, openAttemptQuery, type AttemptCloser, type SupplierCallFlow, type Unknown } from '../suppliers/attempts';
import { pendingTaskInsert } from '../suppliers/supplier-tasks';
import type { LineRow } from './booking-store';
import type { ExecutionOptions, ExecutionResult } from './line-execution';
import { operationFigures, outcomeAction, settleLineOperation, settlement } from './line-operation-outcomes';
import { latestBookAttemptSql, markLineOperation, PENDING_OPERATION_SQL, type HeldOperation } from './line-operation-store';
import { operationStates } from './line-state';
import { changeLine, isStepAborted, lockLine, type LockedLine } from './line-transitions';
import { lineOperationBatchers } from './line-operation-batch';
import { answerClose, lateAnswer, lockForAnswer, redelivered, runLineFlow, startUnderLock, unknownAnswer } from './lines/answer-stages';

interface OperationStart {
  attemptId: string | null;
  request: LineOperationRequest & { newBudgetMinor?: number; newEndDate?: string };
  kind: HeldOperation['kind'];
  /** The operation as read when it started (it changes only under its line's lock, by this job). */
  op: HeldOperation;
}

interface LineContext {
  start_date: string;
  end_date: string;
  open_attempt_id: string | null;
  booking_attempt_id: string | null;
  operation: HeldOperation | null;
}

/** The line as its supplier knows it, asked to do `op`. */
function requestOf(line: LineRow, context: LineContext, op: HeldOperation, attemptId: string): OperationStart['request'] {
  return {
    attemptId,
    bookingId: line.booking_id,
    lineId: line.id,
    channel: line.channel,
    executionMode: line.execution_mode,
    channelCampaignId: line.channel_campaign_id,
    providerReference: line.provider_reference,
    bookingAttemptId: context.booking_attempt_id,
    budgetMinor: toMinor(line.budget_minor),
    startDate: dateOnly(context.start_date),
    endDate: dateOnly(context.end_date),
    ...(op.kind === 'change-budget'
      ? { newBudgetMinor: toMinor(op.budget_to_minor), ...(op.end_date_to ? { newEndDate: dateOnly(op.end_date_to) } : {}) }
      : {}),
  };
}

/** The supplier call an operation makes. */
function callFor(adapter: SupplierAdapter, start: OperationStart, ctx: AdapterContext): Promise<LineOperationOutcome> {
  const r = start.request;
  if (start.kind !== 'change-budget') return adapter.operations[start.kind](r, ctx);
  return adapter.operations['change-budget']({ ...r, newBudgetMinor: r.newBudgetMinor!, newEndDate: r.newEndDate }, ctx);
}

/**
 * An operation asked of a booked line (pause, resume, stop, budget change), through the same
 * supplier-call engine as its booking: the attempt is committed with the line's move to the
 * operation's in-flight status before the supplier hears of it, its id is the supplier's
 * idempotency key, and a redelivery that finds it open never calls again.
 */
function operationFlow(adapter: SupplierAdapter, job: LineOperationJob, ctx: AdapterContext) {
  const { bookingId, lineId, operationId } = job;
  // The locks (and the operation as read with them) taken by `lock` in the outcome transaction.
  let held: LockedLine | null = null;
  let heldOp: HeldOperation | null = null;
  const flow: SupplierCallFlow<OperationStart, LineOperationOutcome, ExecutionResult> = {
    async begin(trx) {
      const open = openAttemptQuery(trx, 'line', lineId).select('id').limit(1).toSQL();
      const locked = await lockLine(trx, bookingId, lineId, {
        sql: `select json_build_object('start_date', c.start_date, 'end_date', c.end_date, 'open_attempt_id', (${open.sql}),
                'booking_attempt_id', ${latestBookAttemptSql('l')},
                'operation', ${PENDING_OPERATION_SQL})
                from campaigns c where c.id = b.campaign_id`,
        bindings: open.bindings,
      });
      if (!locked) return { kind: 'done', result: 'skipped' };
      const { line } = locked;
      const context = locked.read as LineContext;
      // Superseded, settled, or a duplicate delivery: only the line's pending operation runs.
      if (line.operation_id !== operationId || !context.operation) return { kind: 'done', result: 'skipped' };
      const op = context.operation;
      const states = operationStates(op.kind, op.from_status);
      if (context.open_attempt_id) return redelivered(trx, job, locked, context.open_attempt_id, op);
      if (op.status !== 'requested' || line.status !== states.requested) return { kind: 'done', result: 'skipped' };
      if (!adapter.callsSupplier) {
        return { kind: 'call', start: { attemptId: null, kind: op.kind, op, request: requestOf(line, context, op, '') } };
      }
      const attemptId = await startUnderLock(
        trx,
        job,
        locked,
        { operation: op.kind, jobId: lineOperationJobId(operationId) },
        (attemptId) => ({
          ...(states.inFlight !== line.status ? { to: states.inFlight } : {}),
          writes: [markLineOperation(trx, operationId, 'in-flight', { attemptId }).toSQL()],
          patch: { provider_attempt_id: attemptId },
          action: `line.${op.kind}-started`,
          detail: { attemptId, operation: op.kind, operationId, ...operationFigures(op) },
        }),
      );
      return { kind: 'call', start: { attemptId, kind: op.kind, op, request: requestOf(line, context, op, attemptId) } };
    },

    async tryBegin(db) {
      // The usual start: the line waiting for this pause, resume or stop, with no attempt open,
      // moved to its in-flight status by the statement that opens the attempt (with other jobs'
      // starts, when several are waiting). A budget change (which may move money) and anything
      // unusual take `begin`.
      if (!adapter.callsSupplier) return null;
      const attemptId = newAttemptId();
      const started = await lineOperationBatchers(db).start.submit({
        bookingId,
        lineId,
        operationId,
        adapterKey: adapter.descriptor.key,
        attemptId,
      });
      if (!started) return null;
      const { line, operation: op, context } = started;
      return {
        kind: 'call',
        start: {
          attemptId,
          kind: op.kind,
          op,
          request: requestOf(line, { ...context, open_attempt_id: null, operation: op }, op, attemptId),
        },
      };
    },

    call: (start, deadline) => callFor(adapter, start, { ...ctx, ...deadline }),

    async tryApply(db, start, outcome) {
      // The usual answer, applied or refused, to the attempt the line still waits on, for a sandbox
      // line (no money moves) and an operation nothing else follows: one statement (with other
      // jobs' answers, when several are waiting), which closes the attempt with the line's change
      // or is undone. Anything else takes the locked step.
      if (isUnknown(outcome) || outcome.kind === 'workflow' || outcome.kind === 'pending' || start.kind === 'change-budget') return null;
      if (start.request.executionMode !== 'sandbox') return null;
      const applied = outcome.kind === 'applied';
      const { from, to, patch } = settlement(start.op, {
        applied,
        evidence: applied ? null : outcome.reason,
        providerReference: applied ? (outcome.providerReference ?? null) : null,
      });
      try {
        const recorded = await lineOperationBatchers(db).outcome.submit({
          bookingId,
          lineId,
          operationId,
          attemptId: start.attemptId!,
          from,
          to,
          ...('stop' in patch ? { stop: patch.stop === null ? null : JSON.parse(patch.stop as string) } : {}),
          evidence: applied ? null : outcome.reason,
          providerReference: applied ? (outcome.providerReference ?? null) : null,
          applied,
          reason: applied ? null : outcome.reason,
          action: outcomeAction(start.kind, applied),
          detail: { operation: start.kind, operationId, attemptId: start.attemptId, ...(applied ? {} : { reason: outcome.reason }) },
          close: flow.closeWith(outcome),
        });
        return recorded ? (applied ? 'applied' : 'refused') : null;
      } catch (err) {
        if (isStepAborted(err)) return null;
        throw err;
      }
    },

    async lock(trx, start) {
      const read = await lockForAnswer(trx, job, start.attemptId, true);
      held = read.held;
      heldOp = read.op;
      return held ? { attemptOpen: read.attemptOpen } : undefined;
    },

    closeWith: (outcome) =>
      !isUnknown(outcome) && outcome.kind === 'workflow'
        ? { status: 'workflow', detail: { steps: outcome.steps.length } }
        : answerClose(outcome),

    async apply(trx, start, outcome, closer) {
      const locked = held;
      const op = heldOp;
      if (!locked || !op || locked.line.operation_id !== operationId) return flow.late(trx, start, outcome);
      const states = operationStates(op.kind, op.from_status);
      const expected = start.attemptId ? states.inFlight : states.requested;
      if (locked.line.status !== expected) return flow.late(trx, start, outcome);
      return applyOperationOutcome(trx, job, start, outcome, locked, op, closer);
    },

    late: (trx, start, outcome) => lateAnswer(trx, job, start.attemptId, outcome, start.kind),
  };

  return flow;
}

/**
 * Moves a line on its operation's outcome, under the line's lock: the one place a supplier's
 * answer to a pause, resume, stop or budget change moves its line, whether it came back from the
 * call or later (a pending supplier task's final outcome).
 */
export async function applyOperationOutcome(
  trx: Knex,
  job: { bookingId: string; lineId: string; operationId: string },
  start: Pick<OperationStart, 'attemptId' | 'kind' | 'request'>,
  outcome: LineOperationOutcome | Unknown,
  locked: LockedLine,
  op: HeldOperation,
  closer?: AttemptCloser,
): Promise<ExecutionResult> {
  const { bookingId, lineId, operationId } = job;
  if (isUnknown(outcome)) return unknownAnswer(trx, job, start.attemptId, outcome, locked, closer, op);
  if (outcome.kind === 'pending') {
    // The supplier took the change and works on it: the line stays where the call left it, the
    // operation in flight, and the task is asked about (or answers by webhook) until its final
    // outcome settles the operation.
    const task = { attemptId: start.attemptId!, bookingId, lineId, adapterKey: locked.line.adapter_key, outcome };
    await changeLine(
      trx,
      {
        bookingId,
        lineId,
        actor: SYSTEM,
        action: 'line.supplier-pending',
        companionWrite: closer?.embed(),
        writes: [pendingTaskInsert(trx, { ...task, operation: { id: operationId, kind: start.kind, request: start.request } })],
        detail: {
          operation: start.kind,
          operationId,
          attemptId: start.attemptId,
          taskId: outcome.taskId,
          supplierStatus: outcome.supplierStatus,
        },
      },
      locked,
    );
    return 'pending';
  }
  if (outcome.kind === 'workflow') {
    await changeLine(
      trx,
      {
        bookingId,
        lineId,
        patch: { workflow_steps: JSON.stringify(outcome.steps) },
        actor: SYSTEM,
        action: 'line.awaiting-staff',
        companionWrite: closer?.embed(),
        detail: { operation: start.kind, operationId, steps: outcome.steps.length },
      },
      locked,
    );
    return 'awaiting-staff';
  }
  const applied = outcome.kind === 'applied';
  await settleLineOperation(
    trx,
    locked,
    {
      applied,
      actor: SYSTEM,
      action: outcomeAction(start.kind, applied),
      evidence: applied ? null : outcome.reason,
      providerReference: applied ? (outcome.providerReference ?? null) : null,
      detail: { attemptId: start.attemptId, ...(applied ? {} : { reason: outcome.reason }) },
      companionWrite: closer?.embed(),
    },
    op,
  );
  return applied ? 'applied' : 'refused';
}

/** Runs one operation asked of a booked line through the supplier-call engine. */
export function executeLineOperation(
  db: Knex,
  adapter: SupplierAdapter,
  job: LineOperationJob,
  opts: ExecutionOptions,
): Promise<ExecutionResult> {
  return runLineFlow(db, operationFlow(adapter, job, opts.context), opts, { lineId: job.lineId, operationId: job.operationId });
}
