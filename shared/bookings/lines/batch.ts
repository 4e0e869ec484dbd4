import type { Knex } from 'knex';
import { SYSTEM } from '../../auth/actor';
import { Batcher, eachAlone, perPool, unlessDatabaseDown, type ItemFailure } from '../../db/batcher';
import { rawPrepared } from '../../db/knex';
import type { AttemptClose } from '../../suppliers/attempts';
import type { LineRow } from '../booking-store';
import { latestBookAttemptSql, type HeldOperation } from './operation-store';
import { afterStep, STEP_TAIL, stepTailValues, type StepRow } from './store';
import type { LineStatus } from './state';
import { OPERATION_STARTS_SQL, operationStates } from './operations';

/**
 * The two usual steps of a line's supplier job (start the call, record a sandbox line's definite
 * answer), a booking's and a later operation's alike, each one statement for many lines: the
 * jobs a worker process has running submit their steps, and those that arrive while earlier ones
 * are being written go together (see Batcher). A line that is not as expected is left alone
 * (null) and its job takes the locked path, whose start is the same statement for the line alone
 * (lines/flow.ts, `begin`). Lines are locked in (booking, id) order, then their bookings in id
 * order (the global lock order), and each booking is updated once for all its lines.
 * A booking has no operation record: its steps are the ones with no `operationId`.
 */

export interface StartStep {
  bookingId: string;
  lineId: string;
  /** The operation the job runs; null for the line's booking. */
  operationId: string | null;
  adapterKey: string;
  /** The attempt opened with the start: the supplier's idempotency key. */
  attemptId: string;
  /** The queue job that carries the call. */
  jobId: string;
  /** The caller holds the line's lock (its job's `begin`): any operation may start, not only one that batches. */
  locked?: boolean;
  /** What the start's event says beyond the statement's own detail (a budget change's figures). */
  detail?: Record<string, unknown>;
}

/** A started line with what its call needs: its operation as requested, the campaign's flight and the line's booking attempt. */
export interface Started {
  line: LineRow;
  op: HeldOperation | null;
  read: { start_date: string; end_date: string; booking_attempt_id: string | null };
}

/** How a definite answer moves its line: where from and to, whether it was applied, and what else it sets. */
export interface LineAnswer {
  from: LineStatus;
  to: LineStatus;
  applied: boolean;
  /** The line's `stop` after the answer, when the answer changes it (undefined: unchanged). */
  stop?: unknown;
  /** A refusal's reason (null: unchanged). */
  evidence: string | null;
  /** The supplier's reference, when it gave one (null: unchanged). */
  providerReference: string | null;
  action: string;
  /** The line event's detail beyond `from` and `to`. */
  detail: Record<string, unknown>;
}

export interface AnswerStep extends LineAnswer {
  bookingId: string;
  lineId: string;
  operationId: string | null;
  /** The attempt the line must still be waiting on; it is closed with the line's change. */
  attemptId: string;
  close: AttemptClose;
}

// Only the job's own requested operation (or booking), on its line at the waiting status with no
// attempt open, is started. A booking counts only booking attempts: a managed-booking attempt is
// the staff member's working the line. Without the line's lock, only an operation that batches
// starts here: a budget change (which may move money) starts under its lock, by the same statement.
const START_SQL = `
with input as (select * from jsonb_to_recordset(?::jsonb)
                 as i(line_id uuid, booking_id uuid, operation_id uuid, adapter_key text, attempt_id text, job_id text,
                      locked boolean, detail jsonb)),
  ops as (select i.*, k.kind, k.started, row_to_json(o)::jsonb as operation,
                 coalesce(k.requested, o.from_status) as requested, coalesce(k.in_flight, o.from_status) as in_flight
            from input i left join line_operations o on o.id = i.operation_id and o.line_id = i.line_id and o.status = 'requested'
                 join ${OPERATION_STARTS_SQL} on k.kind = coalesce(o.kind, 'book')
           where (i.operation_id is null or o.id is not null) and (k.batches or i.locked)),
  lock_lines as materialized (
    select l.id from booking_lines l where l.id in (select line_id from ops) order by l.booking_id, l.id for update),
  updated as (
    update booking_lines l
       set status = ops.in_flight, provider_attempt_id = ops.attempt_id, version = l.version + 1, updated_at = now(),
           started_at = case when ops.operation_id is null then now() else l.started_at end
      from ops join lock_lines k on k.id = ops.line_id
     where l.id = ops.line_id and l.booking_id = ops.booking_id and l.status = ops.requested and l.operation = ops.kind
       and (ops.operation_id is null or l.operation_id = ops.operation_id) and l.adapter_key = ops.adapter_key
       and not exists (select 1 from supplier_attempts a
                        where a.subject_kind = 'line' and a.subject_id = ops.line_id::text and a.status = 'open'
                          and (ops.operation_id is not null or a.operation = 'book'))
    returning l.*),
  attempts as (
    insert into supplier_attempts (id, subject_kind, subject_id, adapter_key, operation, line_id, booking_id, job_id, status)
    select u.provider_attempt_id, 'line', u.id::text, u.adapter_key, ops.kind, u.id, u.booking_id, ops.job_id, 'open'
      from updated u join ops on ops.line_id = u.id),
  marked as (
    update line_operations o set status = 'in-flight', attempt_id = u.provider_attempt_id
      from updated u join ops on ops.line_id = u.id where o.id = ops.operation_id),
  stepped as (
    select u.*, ops.requested as step_from, ops.started as event_action,
           jsonb_build_object('from', ops.requested, 'to', ops.in_flight, 'attemptId', u.provider_attempt_id)
             || case when ops.operation_id is null then jsonb_build_object('adapterKey', u.adapter_key)
                     else jsonb_build_object('operation', ops.kind, 'operationId', ops.operation_id) end
             || coalesce(ops.detail, '{}'::jsonb) as event_detail
      from updated u join ops on ops.line_id = u.id),
  ${STEP_TAIL}
select updated.*, bumped.status as booking_status, bumped.was as booking_was, bumped.counted,
       json_build_object('operation', ops.operation, 'start_date', c.start_date, 'end_date', c.end_date, 'booking_attempt_id',
         case when ops.operation_id is null then null else ${latestBookAttemptSql('updated')} end) as read_with
  from updated join bumped on bumped.id = updated.booking_id join ops on ops.line_id = updated.id
       join bookings b on b.id = updated.booking_id join campaigns c on c.id = b.campaign_id`;

// Only a sandbox line (a live line moves money, in a transaction of its own) still waiting on
// this attempt for this operation is moved; its attempt must close with it, or the statement is
// undone (FD001). A booking's confirmation is the line's.
const ANSWER_SQL = `
with input as (select * from jsonb_to_recordset(?::jsonb) as i(line_id uuid, booking_id uuid, operation_id uuid, attempt_id text,
                 from_status text, to_status text, applied boolean, set_stop boolean, stop jsonb, evidence text, provider_reference text,
                 event_action text, event_detail jsonb, close_status text, close_reference text, close_detail jsonb)),
  lock_lines as materialized (
    select l.id from booking_lines l where l.id in (select line_id from input) order by l.booking_id, l.id for update),
  updated as (
    update booking_lines l
       set status = i.to_status, operation_id = null,
           stop = case when i.set_stop then i.stop else l.stop end,
           evidence = coalesce(i.evidence, l.evidence),
           provider_reference = coalesce(i.provider_reference, l.provider_reference),
           confirmed_at = case when i.operation_id is null and i.applied then now() else l.confirmed_at end,
           version = l.version + 1, updated_at = now()
      from input i join lock_lines k on k.id = i.line_id
     where l.id = i.line_id and l.booking_id = i.booking_id and l.status = i.from_status
       and l.provider_attempt_id = i.attempt_id and l.operation_id is not distinct from i.operation_id and l.execution_mode = 'sandbox'
    returning l.*),
  closed as (
    update supplier_attempts a
       set status = i.close_status, provider_reference = i.close_reference, detail = i.close_detail, finished_at = now()
      from updated u join input i on i.line_id = u.id
     where a.id = u.provider_attempt_id and a.status = 'open'
    returning a.id),
  marked as (
    update line_operations o
       set status = case when i.applied then 'applied' else 'refused' end, reason = i.evidence, settled_at = now()
      from updated u join input i on i.line_id = u.id
     where o.id = i.operation_id),
  stepped as (
    select u.*, i.from_status as step_from, i.event_action, i.event_detail
      from updated u join input i on i.line_id = u.id),
  ${STEP_TAIL}
select updated.*, bumped.status as booking_status, bumped.was as booking_was, bumped.counted,
       assert_line_step((select count(*) from closed) = (select count(*) from updated),
                        'an attempt closed with its line was no longer open') as checked
  from updated join bumped on bumped.id = updated.booking_id`;

/** Runs a batched step statement over its input rows (the `input` CTE's JSON): the changed lines by id. */
async function runStepBatch(db: Knex, sql: string, input: unknown[]): Promise<Map<string, StepRow>> {
  const rows = await rawPrepared<StepRow>(db, sql, [JSON.stringify(input), ...stepTailValues(SYSTEM)]);
  return new Map(rows.map((r) => [r.id, r]));
}

/** Starts the lines' jobs given: for each, the started line with what its call needs, or null when it was not as expected. */
export async function startSteps(db: Knex, steps: readonly StartStep[]): Promise<Array<Started | null | ItemFailure>> {
  const rows = await runStepBatch(
    db,
    START_SQL,
    steps.map((s) => ({
      line_id: s.lineId,
      booking_id: s.bookingId,
      operation_id: s.operationId,
      adapter_key: s.adapterKey,
      attempt_id: s.attemptId,
      job_id: s.jobId,
      locked: s.locked ?? false,
      detail: s.detail ?? null,
    })),
  );
  // The statement has committed: each line's follow-up is its own (eachAlone).
  return eachAlone(steps, async (s) => {
    const row = rows.get(s.lineId);
    if (!row || row.provider_attempt_id !== s.attemptId) return null;
    const { operation: op, ...read } = row.read_with as Started['read'] & { operation: HeldOperation | null };
    const { requested: from, inFlight: to } = operationStates(op?.kind ?? 'book', op?.from_status ?? 'queued');
    const line = await afterStep(db, { bookingId: s.bookingId, from, to, actor: SYSTEM }, row);
    return { line, op, read };
  });
}

/** Records the sandbox lines' definite answers: for each, the changed line, or null when it was not as expected. */
export async function recordAnswers(db: Knex, steps: readonly AnswerStep[]): Promise<Array<LineRow | null | ItemFailure>> {
  const rows = await runStepBatch(
    db,
    ANSWER_SQL,
    steps.map((s) => ({
      line_id: s.lineId,
      booking_id: s.bookingId,
      operation_id: s.operationId,
      attempt_id: s.attemptId,
      from_status: s.from,
      to_status: s.to,
      applied: s.applied,
      set_stop: s.stop !== undefined,
      stop: s.stop ?? null,
      evidence: s.evidence,
      provider_reference: s.providerReference,
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

/** How many batches of each step may be written at once by one process, and how large one may be. */
const BATCHING = { concurrency: 2, maxSize: 100, key: (s: { lineId: string }) => s.lineId, retryAlone: unlessDatabaseDown };

/** The process's batchers of line steps on the database `db`. */
export const lineBatchers = perPool((db) => ({
  start: new Batcher((steps: readonly StartStep[]) => startSteps(db, steps), BATCHING),
  answer: new Batcher((steps: readonly AnswerStep[]) => recordAnswers(db, steps), BATCHING),
}));
