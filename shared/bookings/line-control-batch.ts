import { randomUUID } from 'node:crypto';
import type { Knex } from 'knex';
import type { Actor } from '../auth/actor';
import { rawPrepared } from '../db/knex';
import { conflict } from '../errors';
import { outboxInsert } from '../outbox/outbox';
import { lineOperationMessage, type JobMessage } from '../queues/jobs';
import type { BookingStatus } from './booking-status';
import type { LineRow } from './booking-store';
import { settleBooking } from './booking-money';
import { requestedStop, type Control } from './line-control';
import { assertMove, operationStates } from './line-state';
import { recountStatus, STEP_TAIL, stepTailValues } from './line-transitions';

/**
 * The lines a campaign's control asks of in one statement: a running or stopped line, which the
 * control moves to where its supplier operation waits (nothing else to close or settle). The
 * others (a queued line's stop, a workflow booking staff hold) take the one-line path.
 */
export const batchable = (line: LineRow) => line.status === 'confirmed' || line.status === 'stopped';

// The lines (locked by the caller, at the versions read), their operations and their jobs,
// written with their events and the booking's counts and status (STEP_TAIL) in one statement.
const CONTROL_SQL = `
with input as (select * from jsonb_to_recordset(?::jsonb)
                 as i(line_id uuid, version int, operation_id uuid, from_status text, to_status text, stop jsonb, stop_before jsonb, detail jsonb)),
  updated as (
    update booking_lines l
       set status = i.to_status, operation = ?, operation_id = i.operation_id, workflow_steps = null,
           stop = i.stop, version = l.version + 1, updated_at = now()
      from input i
     where l.id = i.line_id and l.booking_id = ? and l.version = i.version and l.status = i.from_status and l.operation_id is null
    returning l.*),
  ops as (
    insert into line_operations (id, advertiser_id, booking_id, line_id, kind, status, from_status, stop_before, note, requested_by)
    select i.operation_id, u.advertiser_id, u.booking_id, u.id, ?, 'requested', i.from_status, i.stop_before, ?, ?
      from input i join updated u on u.id = i.line_id),
  jobs as (__OUTBOX__),
  stepped as (select u.*, i.from_status as step_from, ?::text as event_action, i.detail as event_detail
                from updated u join input i on i.line_id = u.id),
  ${STEP_TAIL}
select (select count(*) from updated)::int as moved, bumped.status, bumped.was, bumped.counted from bumped`;

/**
 * Asks each of `lines` (all `batchable`, locked by the caller in this transaction, of booking
 * `bookingId`) to pause, resume or stop, as `requestControl` would one by one: the operation's
 * record, the line's move and its job in the outbox, in one statement. Throws a version
 * conflict, writing nothing, when any line is no longer as read.
 */
export async function requestControls(
  trx: Knex,
  bookingId: string,
  lines: readonly LineRow[],
  control: Control,
  actor: Actor,
  note?: string,
): Promise<JobMessage[]> {
  if (!lines.length) return [];
  const requestedAt = new Date().toISOString();
  const input = lines.map((line) => {
    const to = operationStates(control, line.status).requested;
    assertMove(line.status, to);
    const operationId = randomUUID();
    const stop = requestedStop(line, control, actor, note, requestedAt);
    return {
      line_id: line.id,
      version: line.version,
      operation_id: operationId,
      from_status: line.status,
      to_status: to,
      stop,
      stop_before: line.stop,
      detail: { from: line.status, to, operation: control, operationId, ...(note ? { note } : {}) },
      message: lineOperationMessage(line.adapter_key, { bookingId, lineId: line.id, operationId }),
    };
  });
  const messages = input.map((i) => i.message);
  const jobs = outboxInsert(trx, messages).toSQL();
  const sql = CONTROL_SQL.replace('__OUTBOX__', jobs.sql);
  const rows = await rawPrepared<{ moved: number; status: BookingStatus; was: BookingStatus; counted: boolean }>(trx, sql, [
    JSON.stringify(input.map(({ message: _m, ...row }) => row)),
    control,
    bookingId,
    control,
    note ?? null,
    actor.actorId,
    ...jobs.bindings,
    `line.${control}-requested`,
    ...stepTailValues(actor),
  ]);
  const row = rows[0];
  if (!row || row.moved !== lines.length) {
    // Under the caller's locks this cannot happen; if it does, the caller's transaction keeps nothing of it.
    throw conflict('The lines changed while this request ran. Read them again before acting.', 'version_conflict');
  }
  const { status, was } = row.counted ? row : await recountStatus(trx, bookingId, actor);
  if (status !== was) await settleBooking(trx, { id: bookingId, executionMode: lines[0]!.execution_mode }, status, actor.actorId);
  return messages;
}
