import { SYSTEM } from '../../auth/actor';
import type { BudgetChangeRequest, LineOperationOutcome, LineOperationRequest } from '../../adapters/adapter';
import { toMinor } from '../../db/knex';
import { dateOnly } from '../../dates';
import { lineOperationJobId } from '../../queues/jobs';
import { openAttemptQuery } from '../../suppliers/attempts';
import { outcomeAction, settleLineOperation, settlement } from './settle';
import { latestBookAttemptSql, PENDING_OPERATION_SQL, type HeldOperation } from './operation-store';
import type { LineKind } from './kind';
import { OPERATIONS } from './operations';

/** What a pause, resume, stop or budget change sends: the line as its supplier knows it, with a budget change's new figures. */
export type OperationRequest = LineOperationRequest & Partial<Pick<BudgetChangeRequest, 'newBudgetMinor' | 'newEndDate'>>;

/** What a definite answer says: applied (with the supplier's reference, if any) or refused for a reason. */
function answerOf(outcome: Extract<LineOperationOutcome, { kind: 'applied' | 'refused' }>) {
  const applied = outcome.kind === 'applied';
  return { applied, evidence: applied ? null : outcome.reason, providerReference: applied ? (outcome.providerReference ?? null) : null };
}

/**
 * An operation asked of a booked line (pause, resume, stop, budget change): the attempt is
 * committed with the line's move to the operation's in-flight status before the supplier hears of
 * it, and its answer settles the operation (`settleLineOperation`).
 */
export const IN_FLIGHT: LineKind<OperationRequest, LineOperationOutcome, HeldOperation> = {
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
    ...OPERATIONS[op.kind].asks?.(op),
  }),

  answer({ op, attemptId }, outcome) {
    const { applied, evidence, providerReference } = answerOf(outcome);
    const { from, to, patch } = settlement(op, { applied, evidence, providerReference });
    const change = {
      from,
      to,
      applied,
      ...('stop' in patch ? { stop: patch.stop === null ? null : JSON.parse(patch.stop as string) } : {}),
      evidence,
      providerReference,
      action: outcomeAction(op.kind, applied),
      detail: { operation: op.kind, operationId: op.id, attemptId, ...(applied ? {} : { reason: evidence }) },
    };
    return { result: applied ? 'applied' : 'refused', change };
  },

  async settle(trx, _job, { attemptId }, outcome, { locked, op }, closer) {
    const answer = answerOf(outcome);
    const { applied } = answer;
    const detail = { attemptId, ...(applied ? {} : { reason: answer.evidence }) };
    const action = outcomeAction(op.kind, applied);
    await settleLineOperation(trx, locked, { ...answer, actor: SYSTEM, action, detail, companionWrite: closer?.embed() }, op);
    return applied ? 'applied' : 'refused';
  },
};
