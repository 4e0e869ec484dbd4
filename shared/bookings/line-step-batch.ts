import type { Knex } from 'knex';
import { SYSTEM } from '../auth/actor';
import { Batcher, eachAlone, perPool, unlessDatabaseDown, type ItemFailure } from '../db/batcher';
import { rawPrepared } from '../db/knex';
import type { AttemptClose } from '../suppliers/attempts';
import { BOOK_LINE } from '../queues/jobs';
import type { LineRow } from './booking-store';
import { afterStep, STEP_TAIL, stepTailValues, type StepRow } from './line-transitions';

/**
 * The two steps every supplier job takes (start a queued line, record a sandbox line's definite
 * answer), written for many lines in one statement: the jobs a worker process has running
 * submit their steps, and those that arrive while earlier ones are being written go together
 * (see Batcher). Each line changes exactly as its own step would (`stepLine` with the same
 * conditions); a line that is not as expected is left alone and its caller takes the locked
 * path. Lines are locked in (booking, id) order, then their bookings in id order (the global
 * lock order), and each booking is updated once for all its lines in the statement.
 */

export interface LineStartStep {
  bookingId: string;
  lineId: string;
  adapterKey: string;
  /** The attempt opened with the start: the supplier's idempotency key. */
  attemptId: string;
}

export interface LineOutcomeStep {
  bookingId: string;
  lineId: string;
  /** The attempt the line must still be waiting on; it is closed with the line's change. */
  attemptId: string;
  to: 'confirmed' | 'rejected';
  providerReference: string | null;
  evidence: string | null;
  /** The line event's detail beyond `from` and `to`. */
  detail: Record<string, unknown>;
  close: AttemptClose;
}

export interface Flight {
  start_date: string;
  end_date: string;
}

// Only the job's own queued line of this adapter, with no attempt open, is started.
const START_SQL = `
with input as (select * from jsonb_to_recordset(?::jsonb) as i(line_id uuid, booking_id uuid, adapter_key text, attempt_id text)),
  lock_lines as materialized (
    select l.id from booking_lines l where l.id in (select line_id from input) and l.status = 'queued' order by l.booking_id, l.id for update),
  updated as (
    update booking_lines l
       set status = 'in-progress', provider_attempt_id = i.attempt_id, started_at = now(), version = l.version + 1, updated_at = now()
      from input i join lock_lines k on k.id = i.line_id
     where l.id = i.line_id and l.booking_id = i.booking_id and l.status = 'queued' and l.operation = 'book' and l.adapter_key = i.adapter_key
       and not exists (select 1 from supplier_attempts a
                        where a.subject_kind = 'line' and a.subject_id = i.line_id::text and a.operation = 'book' and a.status = 'open')
    returning l.*),
  attempts as (
    insert into supplier_attempts (id, subject_kind, subject_id, adapter_key, operation, line_id, booking_id, job_id, status)
    select u.provider_attempt_id, 'line', u.id::text, u.adapter_key, 'book', u.id, u.booking_id, '${BOOK_LINE}-' || u.id, 'open' from updated u),
  stepped as (
    select u.*, 'queued' as step_from, 'line.attempt-started' as event_action,
           jsonb_build_object('from', 'queued', 'to', 'in-progress', 'attemptId', u.provider_attempt_id, 'adapterKey', u.adapter_key)
             as event_detail
      from updated u),
  ${STEP_TAIL}
select updated.*, bumped.status as booking_status, bumped.was as booking_was, bumped.counted,
       json_build_object('start_date', c.start_date, 'end_date', c.end_date) as read_with
  from updated join bumped on bumped.id = updated.booking_id
       join bookings b on b.id = updated.booking_id join campaigns c on c.id = b.campaign_id`;

/**
 * A batched outcome statement's close of each changed line's attempt, with its answer (the CTE
 * `closed`, which CLOSED_WITH_LINES checks): the lines are the CTE `updated`, the answers `input`.
 */
export const CLOSE_ATTEMPTS = `closed as (
    update supplier_attempts a
       set status = i.close_status, provider_reference = i.close_reference, detail = i.close_detail, finished_at = now()
      from updated u join input i on i.line_id = u.id
     where a.id = u.provider_attempt_id and a.status = 'open'
    returning a.id),`;

/**
 * The end of a batched outcome statement: the changed lines with their bookings, undone (FD001)
 * unless every line's attempt (the CTE \`closed\`) was closed with it.
 */
export const CLOSED_WITH_LINES = `
select updated.*, bumped.status as booking_status, bumped.was as booking_was, bumped.counted,
       assert_line_step((select count(*) from closed) = (select count(*) from updated),
                        'an attempt closed with its line was no longer open') as checked
  from updated join bumped on bumped.id = updated.booking_id`;

// Only a sandbox line still waiting on this attempt is moved (a live line moves money, in a
// transaction of its own); its attempt must close with it, or the statement is undone (FD001).
const OUTCOME_SQL = `
with input as (select * from jsonb_to_recordset(?::jsonb) as i(line_id uuid, booking_id uuid, attempt_id text, to_status text,
                 provider_reference text, evidence text, event_detail jsonb, close_status text, close_reference text, close_detail jsonb)),
  lock_lines as materialized (
    select l.id from booking_lines l where l.id in (select line_id from input) and l.status = 'in-progress' order by l.booking_id, l.id for update),
  updated as (
    update booking_lines l
       set status = i.to_status,
           provider_reference = case when i.to_status = 'confirmed' then i.provider_reference else l.provider_reference end,
           confirmed_at = case when i.to_status = 'confirmed' then now() else l.confirmed_at end,
           evidence = case when i.to_status = 'rejected' then i.evidence else l.evidence end,
           version = l.version + 1, updated_at = now()
      from input i join lock_lines k on k.id = i.line_id
     where l.id = i.line_id and l.booking_id = i.booking_id and l.status = 'in-progress'
       and l.provider_attempt_id = i.attempt_id and l.execution_mode = 'sandbox'
    returning l.*),
  ${CLOSE_ATTEMPTS}
  stepped as (
    select u.*, 'in-progress' as step_from, 'line.' || u.status as event_action, i.event_detail
      from updated u join input i on i.line_id = u.id),
  ${STEP_TAIL}
${CLOSED_WITH_LINES}`;

/** Runs a batched step statement over its input rows (the `input` CTE's JSON): the changed lines by id. */
export async function runStepBatch(db: Knex, sql: string, input: unknown[]): Promise<Map<string, StepRow>> {
  const rows = await rawPrepared<StepRow>(db, sql, [JSON.stringify(input), ...stepTailValues(SYSTEM)]);
  return new Map(rows.map((r) => [r.id, r]));
}

/** Starts the lines given: for each, the started line and its campaign's flight, or null when it was not as expected. */
export async function startLines(
  db: Knex,
  steps: readonly LineStartStep[],
): Promise<Array<{ line: LineRow; flight: Flight } | null | ItemFailure>> {
  const rows = await runStepBatch(
    db,
    START_SQL,
    steps.map((s) => ({ line_id: s.lineId, booking_id: s.bookingId, adapter_key: s.adapterKey, attempt_id: s.attemptId })),
  );
  // The statement has committed: each line's follow-up is its own (eachAlone).
  return eachAlone(steps, async (s) => {
    const row = rows.get(s.lineId);
    if (!row || row.provider_attempt_id !== s.attemptId) return null;
    const flight = row.read_with as Flight;
    const line = await afterStep(db, { bookingId: s.bookingId, from: 'queued', to: 'in-progress', actor: SYSTEM }, row);
    return { line, flight };
  });
}

/** Records the sandbox lines' definite answers: for each, the changed line, or null when it was not as expected. */
export async function recordSandboxOutcomes(db: Knex, steps: readonly LineOutcomeStep[]): Promise<Array<LineRow | null | ItemFailure>> {
  const rows = await runStepBatch(
    db,
    OUTCOME_SQL,
    steps.map((s) => ({
      line_id: s.lineId,
      booking_id: s.bookingId,
      attempt_id: s.attemptId,
      to_status: s.to,
      provider_reference: s.providerReference,
      evidence: s.evidence,
      event_detail: { from: 'in-progress', to: s.to, ...s.detail },
      close_status: s.close.status,
      close_reference: s.close.providerReference ?? null,
      close_detail: s.close.detail ?? null,
    })),
  );
  return eachAlone(steps, async (s) => {
    const row = rows.get(s.lineId);
    if (!row) return null;
    return afterStep(db, { bookingId: s.bookingId, from: 'in-progress', to: s.to, actor: SYSTEM }, row);
  });
}

/** How many batches of each step may be written at once by one process, and how large one may be. */
export const BATCHING = { concurrency: 2, maxSize: 100, key: (s: { lineId: string }) => s.lineId, retryAlone: unlessDatabaseDown };

/** The process's batchers of line steps on the database `db`. */
export const lineStepBatchers = perPool((db) => ({
  start: new Batcher((steps: readonly LineStartStep[]) => startLines(db, steps), BATCHING),
  outcome: new Batcher((steps: readonly LineOutcomeStep[]) => recordSandboxOutcomes(db, steps), BATCHING),
}));
