import { SYSTEM } from '../../auth/actor';
import type { BudgetChangeRequest, LineOperationOutcome, LineOperationRequest } from '../../adapters/adapter';
import { toMinor } from '../../db/knex';
import { dateOnly } from '../../dates';
import { lineOperationJobId } from '../../queues/jobs';
import { openAttemptQuery } from '../../suppliers/attempts';
import { lineOperationBatchers } from '../line-operation-batch';
import { operationFigures, outcomeAction, settleLineOperation, settlement } from '../line-operation-outcomes';
import { latestBookAttemptSql, markLineOperation, PENDING_OPERATION_SQL } from '../line-operation-store';
import type { LineKind } from './kind';
import { OPERATIONS } from './operations';

/** What a pause, resume, stop or budget change sends: the line as its supplier knows it, with a budget change's new figures. */
export type OperationRequest = LineOperationRequest & Partial<Pick<BudgetChangeRequest, 'newBudgetMinor' | 'newEndDate'>>;

/**
 * An operation asked of a booked line (pause, resume, stop, budget change): the attempt is
 * committed with the line's move to the operation's in-flight status before the supplier hears of
 * it, and its answer settles the operation (`settleLineOperation`).
 */
export const IN_FLIGHT: LineKind<OperationRequest, LineOperationOutcome> = {
  jobId: (job) => lineOperationJobId(job.operationId!),

  read(trx, job) {
    const open = openAttemptQuery(trx, 'line', job.lineId).select('id').limit(1).toSQL();
    return {
      sql: `select json_build_object('start_date', c.start_date, 'end_date', c.end_date, 'open_attempt_id', (${open.sql}),
              'booking_attempt_id', ${latestBookAttemptSql('l')}, 'operation', ${PENDING_OPERATION_SQL})
              from campaigns c where c.id = b.campaign_id`,
      bindings: open.bindings,
    };
  },

  // Superseded, settled, or a duplicate delivery: only the line's pending operation runs.
  own: (job, line, op) => (op && line.operation_id === job.operationId ? op : undefined),

  request: (line, read, op, attemptId) => ({
    attemptId,
    bookingId: line.booking_id,
    lineId: line.id,
    channel: line.channel,
    executionMode: line.execution_mode,
    channelCampaignId: line.channel_campaign_id,
    providerReference: line.provider_reference,
    bookingAttemptId: read.booking_attempt_id ?? null,
    budgetMinor: toMinor(line.budget_minor),
    startDate: dateOnly(read.start_date),
    endDate: dateOnly(read.end_date),
    ...(op!.kind === 'change-budget'
      ? { newBudgetMinor: toMinor(op!.budget_to_minor), ...(op!.end_date_to ? { newEndDate: dateOnly(op!.end_date_to) } : {}) }
      : {}),
  }),

  started: (trx, _line, op, attemptId) => ({
    writes: [markLineOperation(trx, op!.id, 'in-flight', { attemptId }).toSQL()],
    action: `line.${op!.kind}-started`,
    detail: { attemptId, operation: op!.kind, operationId: op!.id, ...operationFigures(op!) },
  }),

  async tryStart(db, { bookingId, lineId, operationId }, adapterKey, attemptId) {
    // A budget change (which may move money) is not batched: the batch leaves it to `begin`.
    const started = await lineOperationBatchers(db).start.submit({ bookingId, lineId, operationId: operationId!, adapterKey, attemptId });
    if (!started) return null;
    const { line, operation: op, context } = started;
    return { attemptId, op, request: IN_FLIGHT.request(line, { ...context, open_attempt_id: null }, op, attemptId) };
  },

  async tryAnswer(db, { bookingId, lineId, operationId }, start, outcome, _close, closing) {
    // A sandbox line (no money moves) and an operation that batches: one statement, with other
    // jobs' answers when several are waiting.
    const op = start.op!;
    if (!OPERATIONS[op.kind].batches || start.request.executionMode !== 'sandbox') return null;
    const applied = outcome.kind === 'applied';
    const evidence = applied ? null : outcome.reason;
    const providerReference = applied ? (outcome.providerReference ?? null) : null;
    const { from, to, patch } = settlement(op, { applied, evidence, providerReference });
    const recorded = await lineOperationBatchers(db).outcome.submit({
      bookingId,
      lineId,
      operationId: operationId!,
      attemptId: start.attemptId!,
      from,
      to,
      ...('stop' in patch ? { stop: patch.stop === null ? null : JSON.parse(patch.stop as string) } : {}),
      evidence,
      providerReference,
      applied,
      reason: evidence,
      action: outcomeAction(op.kind, applied),
      detail: { operation: op.kind, operationId, attemptId: start.attemptId, ...(applied ? {} : { reason: outcome.reason }) },
      close: closing,
    });
    return recorded ? (applied ? 'applied' : 'refused') : null;
  },

  async settle(trx, _job, { attemptId }, outcome, { locked, op }, closer) {
    const applied = outcome.kind === 'applied';
    await settleLineOperation(
      trx,
      locked,
      {
        applied,
        actor: SYSTEM,
        action: outcomeAction(op!.kind, applied),
        evidence: applied ? null : outcome.reason,
        providerReference: applied ? (outcome.providerReference ?? null) : null,
        detail: { attemptId, ...(applied ? {} : { reason: outcome.reason }) },
        companionWrite: closer?.embed(),
      },
      op!,
    );
    return applied ? 'applied' : 'refused';
  },
};
