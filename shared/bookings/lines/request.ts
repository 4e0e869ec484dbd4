import { randomUUID } from 'node:crypto';
import type { Knex } from 'knex';
import type { Actor } from '../../auth/actor';
import { rawPrepared } from '../../db/knex';
import { conflict } from '../../errors';
import { outboxInsert } from '../../outbox/outbox';
import { lineOperationMessage, type JobMessage } from '../../queues/jobs';
import { settleBooking } from '../booking-money';
import type { BookingStatus } from '../booking-status';
import type { LineRow } from '../booking-store';
import { assertMove, type LineStop } from './state';
import { recountStatus, STEP_TAIL, stepTailValues } from './store';
import { OPERATIONS, operationStates } from './operations';
import type { LineOperation } from './statuses';

/** An operation asked of a line, as read under the caller's lock. */
export interface OperationRequest {
  line: LineRow;
  kind: Exclude<LineOperation, 'book'>;
  /** The line's `stop` once asked; omitted, the line keeps its own. */
  stop?: LineStop | null;
  /** Kept on the operation's record: the line's `stop` before (a refusal restores it), a budget change's figures. */
  stopBefore?: LineStop | null;
  amendmentId?: string;
  budgetFromMinor?: number;
  budgetToMinor?: number;
  endDateTo?: string;
  note?: string;
  /** What the request's event says besides the move and the operation. */
  detail?: Record<string, unknown>;
}

export interface RequestedOperation {
  line: LineRow;
  operationId: string;
  message: JobMessage;
}

// The lines (locked by the caller, at the versions read, nothing in hand), their operations'
// records and jobs, written with their events and the booking's counts and status (STEP_TAIL).
const REQUEST_SQL = `
with input as (select * from jsonb_to_recordset(?::jsonb)
                 as i(line_id uuid, version int, operation_id uuid, kind text, from_status text, to_status text, stop jsonb,
                      stop_before jsonb, amendment_id uuid, budget_from_minor bigint, budget_to_minor bigint, end_date_to date,
                      note text, event_action text, event_detail jsonb)),
  updated as (
    update booking_lines l
       set status = i.to_status, operation = i.kind, operation_id = i.operation_id, workflow_steps = null,
           stop = coalesce(i.stop, l.stop), version = l.version + 1, updated_at = now()
      from input i
     where l.id = i.line_id and l.booking_id = ? and l.version = i.version and l.status = i.from_status and l.operation_id is null
    returning l.*),
  ops as (
    insert into line_operations (id, advertiser_id, booking_id, line_id, kind, status, from_status, stop_before,
                                 budget_from_minor, budget_to_minor, end_date_to, amendment_id, note, requested_by)
    select i.operation_id, u.advertiser_id, u.booking_id, u.id, i.kind, 'requested', i.from_status, i.stop_before,
           i.budget_from_minor, i.budget_to_minor, i.end_date_to, i.amendment_id, i.note, ?
      from input i join updated u on u.id = i.line_id),
  jobs as (__OUTBOX__),
  stepped as (select u.*, i.from_status as step_from, i.event_action, i.event_detail from updated u join input i on i.line_id = u.id),
  ${STEP_TAIL}
select updated.*, bumped.status as booking_status, bumped.was as booking_was, bumped.counted from updated cross join bumped`;

/**
 * The request stage of every operation asked of a booked line: for each of `requests` (lines of
 * booking `bookingId`), the operation's record, the line's move to where the operation waits and
 * its job in the outbox, with its event and the booking's counts and status, in one statement,
 * for one line or many. Throws a version conflict, keeping nothing, when any line is no longer
 * as read. The answers are in the order asked.
 */
export async function requestOperations(
  trx: Knex,
  bookingId: string,
  requests: readonly OperationRequest[],
  actor: Actor,
): Promise<RequestedOperation[]> {
  if (!requests.length) return [];
  const asked = requests.map(({ line, kind, ...r }) => {
    const to = operationStates(kind, line.status).requested;
    if (to !== line.status) assertMove(line.status, to);
    const operationId = randomUUID();
    const row = {
      line_id: line.id,
      version: line.version,
      operation_id: operationId,
      kind,
      from_status: line.status,
      to_status: to,
      stop: r.stop ?? null,
      stop_before: r.stopBefore ?? null,
      amendment_id: r.amendmentId ?? null,
      budget_from_minor: r.budgetFromMinor ?? null,
      budget_to_minor: r.budgetToMinor ?? null,
      end_date_to: r.endDateTo ?? null,
      note: r.note ?? null,
      event_action: OPERATIONS[kind].events.requested,
      event_detail: { from: line.status, to, operation: kind, operationId, ...r.detail },
    };
    return { row, operationId, message: lineOperationMessage(line.adapter_key, { bookingId, lineId: line.id, operationId }) };
  });
  const jobs = outboxInsert(
    trx,
    asked.map((a) => a.message),
  ).toSQL();
  const rows = await rawPrepared<LineRow & { booking_status: BookingStatus; booking_was: BookingStatus; counted: boolean }>(
    trx,
    REQUEST_SQL.replace('__OUTBOX__', jobs.sql),
    [JSON.stringify(asked.map((a) => a.row)), bookingId, actor.actorId, ...jobs.bindings, ...stepTailValues(actor)],
  );
  if (rows.length !== requests.length) {
    // Under the caller's locks this cannot happen; if it does, the caller's transaction keeps nothing of it.
    throw conflict('The lines changed while this request ran. Read them again before acting.', 'version_conflict');
  }
  const { status, was } = rows[0]!.counted
    ? { status: rows[0]!.booking_status, was: rows[0]!.booking_was }
    : await recountStatus(trx, bookingId, actor);
  if (status !== was) await settleBooking(trx, { id: bookingId, executionMode: rows[0]!.execution_mode }, status, actor.actorId);
  const byId = new Map(rows.map(({ booking_status: _s, booking_was: _w, counted: _c, ...line }) => [line.id, line as LineRow]));
  return asked.map((a) => ({ line: byId.get(a.row.line_id)!, operationId: a.operationId, message: a.message }));
}
