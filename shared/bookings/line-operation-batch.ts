import type { Knex } from 'knex';
import { SYSTEM } from '../auth/actor';
import { Batcher, eachAlone, perPool, type ItemFailure } from '../db/batcher';
import type { AttemptClose } from '../suppliers/attempts';
import { LINE_OPERATION } from '../queues/jobs';
import type { LineRow } from './booking-store';
import { operationStates, type LineStatus } from './line-state';
import { BATCHED_STATES_SQL } from './lines/operations';
import { latestBookAttemptSql, type HeldOperation } from './line-operation-store';
import { afterStep, STEP_TAIL } from './line-transitions';
import { BATCHING, CLOSE_ATTEMPTS, CLOSED_WITH_LINES, runStepBatch } from './line-step-batch';

/**
 * The two steps of a pause, resume or stop (start the call, record a sandbox line's definite
 * answer), written for many lines in one statement, as a booking's are (line-step-batch.ts):
 * the operation jobs a worker process has running submit their steps, and those that arrive
 * while earlier ones are being written go together. Each line changes exactly as its own step in
 * lines/flow.ts would; a line that is not as expected is left alone (null), and
 * its job takes the locked path.
 */

export interface OperationStartStep {
  bookingId: string;
  lineId: string;
  operationId: string;
  adapterKey: string;
  /** The attempt opened with the start: the supplier's idempotency key. */
  attemptId: string;
}

/** What a started operation's job needs: the operation as requested, the campaign's flight and the line's booking attempt. */
export interface StartedOperation {
  line: LineRow;
  operation: HeldOperation;
  context: { start_date: string; end_date: string; booking_attempt_id: string | null };
}

export interface OperationOutcomeStep {
  bookingId: string;
  lineId: string;
  operationId: string;
  attemptId: string;
  from: LineStatus;
  to: LineStatus;
  /** The line's `stop` after the answer, when the answer changes it (undefined: unchanged). */
  stop?: unknown;
  evidence: string | null;
  providerReference: string | null;
  applied: boolean;
  reason: string | null;
  action: string;
  detail: Record<string, unknown>;
  close: AttemptClose;
}

// Only the job's own requested operation, on its line at the operation's waiting status with no
// attempt open, is started; a budget change (which may move money) is never started here.
const START_SQL = `
with input as (select * from jsonb_to_recordset(?::jsonb) as i(line_id uuid, booking_id uuid, operation_id uuid, adapter_key text, attempt_id text)),
  ops as (select i.*, k.requested, k.in_flight, row_to_json(o)::jsonb as operation, o.kind
            from input i join line_operations o on o.id = i.operation_id and o.line_id = i.line_id and o.status = 'requested'
                 join ${BATCHED_STATES_SQL} on k.kind = o.kind),
  lock_lines as materialized (
    select l.id from booking_lines l where l.id in (select line_id from ops) order by l.booking_id, l.id for update),
  updated as (
    update booking_lines l
       set status = ops.in_flight, provider_attempt_id = ops.attempt_id, version = l.version + 1, updated_at = now()
      from ops join lock_lines k on k.id = ops.line_id
     where l.id = ops.line_id and l.booking_id = ops.booking_id and l.status = ops.requested
       and l.operation_id = ops.operation_id and l.adapter_key = ops.adapter_key
       and not exists (select 1 from supplier_attempts a where a.subject_kind = 'line' and a.subject_id = ops.line_id::text and a.status = 'open')
    returning l.*),
  attempts as (
    insert into supplier_attempts (id, subject_kind, subject_id, adapter_key, operation, line_id, booking_id, job_id, status)
    select u.provider_attempt_id, 'line', u.id::text, u.adapter_key, ops.kind, u.id, u.booking_id, '${LINE_OPERATION}-' || ops.operation_id, 'open'
      from updated u join ops on ops.line_id = u.id),
  marked as (
    update line_operations o set status = 'in-flight', attempt_id = u.provider_attempt_id
      from updated u where o.id = u.operation_id),
  stepped as (
    select u.*, ops.requested as step_from, 'line.' || ops.kind || '-started' as event_action,
           jsonb_build_object('from', ops.requested, 'to', ops.in_flight, 'attemptId', u.provider_attempt_id,
                              'operation', ops.kind, 'operationId', ops.operation_id) as event_detail
      from updated u join ops on ops.line_id = u.id),
  ${STEP_TAIL}
select updated.*, bumped.status as booking_status, bumped.was as booking_was, bumped.counted,
       json_build_object('operation', ops.operation, 'start_date', c.start_date, 'end_date', c.end_date,
         'booking_attempt_id', ${latestBookAttemptSql('updated')}) as read_with
  from updated join bumped on bumped.id = updated.booking_id join ops on ops.line_id = updated.id
       join bookings b on b.id = updated.booking_id join campaigns c on c.id = b.campaign_id`;

// Only a sandbox line still waiting on this attempt for this operation is moved; its attempt
// must close with it, or the statement is undone (FD001).
const OUTCOME_SQL = `
with input as (select * from jsonb_to_recordset(?::jsonb) as i(line_id uuid, booking_id uuid, operation_id uuid, attempt_id text,
                 from_status text, to_status text, set_stop boolean, stop jsonb, evidence text, provider_reference text,
                 applied boolean, reason text, event_action text, event_detail jsonb,
                 close_status text, close_reference text, close_detail jsonb)),
  lock_lines as materialized (
    select l.id from booking_lines l where l.id in (select line_id from input) order by l.booking_id, l.id for update),
  updated as (
    update booking_lines l
       set status = i.to_status, operation_id = null,
           stop = case when i.set_stop then i.stop else l.stop end,
           evidence = coalesce(i.evidence, l.evidence),
           provider_reference = coalesce(i.provider_reference, l.provider_reference),
           version = l.version + 1, updated_at = now()
      from input i join lock_lines k on k.id = i.line_id
     where l.id = i.line_id and l.booking_id = i.booking_id and l.status = i.from_status
       and l.provider_attempt_id = i.attempt_id and l.operation_id = i.operation_id and l.execution_mode = 'sandbox'
    returning l.*),
  ${CLOSE_ATTEMPTS}
  marked as (
    update line_operations o
       set status = case when i.applied then 'applied' else 'refused' end, reason = i.reason, settled_at = now()
      from updated u join input i on i.line_id = u.id
     where o.id = i.operation_id),
  stepped as (
    select u.*, i.from_status as step_from, i.event_action, i.event_detail
      from updated u join input i on i.line_id = u.id),
  ${STEP_TAIL}
${CLOSED_WITH_LINES}`;

/** Starts the operations given: for each, the started line with what its call needs, or null when it was not as expected. */
export async function startOperations(
  db: Knex,
  steps: readonly OperationStartStep[],
): Promise<Array<StartedOperation | null | ItemFailure>> {
  const rows = await runStepBatch(
    db,
    START_SQL,
    steps.map((s) => ({
      line_id: s.lineId,
      booking_id: s.bookingId,
      operation_id: s.operationId,
      adapter_key: s.adapterKey,
      attempt_id: s.attemptId,
    })),
  );
  // The statement has committed: each line's follow-up is its own (eachAlone).
  return eachAlone(steps, async (s) => {
    const row = rows.get(s.lineId);
    if (!row || row.provider_attempt_id !== s.attemptId) return null;
    const { operation, ...context } = row.read_with as StartedOperation['context'] & { operation: HeldOperation };
    const { requested: from, inFlight: to } = operationStates(operation.kind, operation.from_status);
    const line = await afterStep(db, { bookingId: s.bookingId, from, to, actor: SYSTEM }, row);
    return { line, operation, context };
  });
}

/** Records the sandbox lines' definite answers to their operations: each changed line, or null when it was not as expected. */
export async function recordOperationOutcomes(
  db: Knex,
  steps: readonly OperationOutcomeStep[],
): Promise<Array<LineRow | null | ItemFailure>> {
  const rows = await runStepBatch(
    db,
    OUTCOME_SQL,
    steps.map((s) => ({
      line_id: s.lineId,
      booking_id: s.bookingId,
      operation_id: s.operationId,
      attempt_id: s.attemptId,
      from_status: s.from,
      to_status: s.to,
      set_stop: s.stop !== undefined,
      stop: s.stop ?? null,
      evidence: s.evidence,
      provider_reference: s.providerReference,
      applied: s.applied,
      reason: s.reason,
      event_action: s.action,
      event_detail: { from: s.from, to: s.to, ...s.detail },
      close_status: s.close.status,
      close_reference: s.close.providerReference ?? null,
      close_detail: s.close.detail ?? null,
    })),
  );
  return eachAlone(steps, async (s) => {
    const row = rows.get(s.lineId);
    if (!row) return null;
    return afterStep(db, { bookingId: s.bookingId, from: s.from, to: s.to, actor: SYSTEM }, row);
  });
}

/** The process's batchers of line operation steps on the database `db`. */
export const lineOperationBatchers = perPool((db) => ({
  start: new Batcher((steps: readonly OperationStartStep[]) => startOperations(db, steps), BATCHING),
  outcome: new Batcher((steps: readonly OperationOutcomeStep[]) => recordOperationOutcomes(db, steps), BATCHING),
}));
