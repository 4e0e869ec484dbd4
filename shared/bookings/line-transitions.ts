import type { Knex } from 'knex';
import { conflict, notFound } from '../errors';
import type { Actor } from '../actor';
import { EVENT_INSERT, eventValues } from './booking-events';
import { bookingStatusOf, type BookingStatus } from './booking-status';
import type { LineRow } from './booking-store';
import { assertMove, type LineStatus } from './line-state';
import { settleBooking, settleLine } from '../wallet/settlement';

export interface LineChange {
  bookingId: string;
  lineId: string;
  /** When given, the line must be at exactly this version (409 otherwise). */
  expectedVersion?: number;
  /** The new status; omitted for changes that keep it (a claim). */
  to?: LineStatus;
  /** Other columns to set, snake_case. */
  patch?: Record<string, unknown>;
  actor: Actor;
  action: string;
  detail?: unknown;
  /** Another write made in the same statement as the line's (e.g. opening the attempt it starts). */
  alongside?: Knex.Sql;
  /** Extra checks on the locked line before it changes (e.g. "only workflow lines"). */
  guard?: (line: LineRow) => void;
}

/**
 * Locks a booking and then its line, the one lock order every path uses (booking, then lines
 * by id), so that deciding on a line always reads it as it is. One round trip: the row marks
 * lock in FROM order, booking first. `also` is one more value the caller wants read with it
 * (an SQL expression over `b` and `l`), returned as `also`.
 */
export async function lockLine(
  trx: Knex,
  bookingId: string,
  lineId: string,
  also?: { sql: string; bindings: readonly Knex.Value[] },
): Promise<{ booking: { id: string; status: BookingStatus }; line: LineRow; also: unknown } | null> {
  const { rows } = await trx.raw<{ rows: Array<LineRow & { booking_status: BookingStatus; also_value?: unknown }> }>(
    `select l.*, b.status as booking_status${also ? `, (${also.sql}) as also_value` : ''}
       from bookings b join booking_lines l on l.booking_id = b.id
      where b.id = ? and l.id = ?
        for update of b, l`,
    [...(also?.bindings ?? []), bookingId, lineId],
  );
  const row = rows[0];
  if (!row) return null;
  const { booking_status: status, also_value: extra, ...line } = row;
  return { booking: { id: bookingId, status }, line, also: extra };
}

/**
 * The one way a line changes: under the booking's and the line's row locks, check the
 * expected version and the transition, write the line, append the event and recompute the
 * booking's status, all in the caller's transaction.
 */
export type LockedLine = NonNullable<Awaited<ReturnType<typeof lockLine>>>;

/**
 * `held`: the locks the caller already took in this transaction, with the line as read then
 * and not changed since; saves taking them again.
 */
export async function changeLine(trx: Knex, c: LineChange, held?: LockedLine): Promise<LineRow> {
  const locked = held ?? (await lockLine(trx, c.bookingId, c.lineId));
  if (!locked) throw notFound();
  const { booking, line } = locked;
  if (c.expectedVersion !== undefined && c.expectedVersion !== line.version) {
    throw conflict(`The line is at version ${line.version}, not ${c.expectedVersion}. Read it again before acting.`, 'version_conflict');
  }
  c.guard?.(line);
  // A change to the status a line already has is not a transition either (a second start, a second uncertain).
  if (c.to) assertMove(line.status, c.to);

  // One statement writes the line, appends its event and bumps the booking's version, returning
  // the booking's other lines' statuses (stable: every line change holds the booking's lock).
  const to = c.to ?? line.status;
  const lineUpdate = trx('booking_lines')
    .where({ id: line.id, version: line.version })
    .update({ ...(c.patch ?? {}), ...(c.to ? { status: c.to } : {}), version: line.version + 1, updated_at: trx.fn.now() })
    .returning('*')
    .toSQL();
  const detail = { from: line.status, to, ...(c.detail && typeof c.detail === 'object' ? c.detail : {}) };
  const { rows } = await trx.raw<{ rows: Array<LineRow & { other_statuses: LineStatus[] }> }>(
    `with ${c.alongside ? `alongside as (${c.alongside.sql}),` : ''}
     updated as (${lineUpdate.sql}),
     event as (${EVENT_INSERT}),
     bumped as (
       update bookings set version = version + 1 where id = ?
       returning (select coalesce(array_agg(o.status::text), '{}') from booking_lines o where o.booking_id = bookings.id and o.id <> ?) as other_statuses
     )
     select updated.*, bumped.other_statuses from updated, bumped`,
    [...(c.alongside?.bindings ?? []), ...lineUpdate.bindings, ...eventValues({ ...c, detail }), c.bookingId, line.id],
  );
  const { other_statuses: others, ...updated } = rows[0] ?? {};
  if (!others) throw conflict('The line changed while this request ran. Read it again before acting.', 'version_conflict');

  if (c.to && c.to !== line.status) await settleLine(trx, updated as LineRow, c.to, c.actor.actorId);

  const status = bookingStatusOf([...others, to]);
  if (status !== booking.status) {
    const event = eventValues({
      bookingId: c.bookingId,
      action: 'booking.status-changed',
      actor: c.actor,
      detail: { from: booking.status, to: status },
    });
    await trx.raw(`with status as (update bookings set status = ? where id = ?) ${EVENT_INSERT}`, [status, c.bookingId, ...event]);
    await settleBooking(trx, { id: c.bookingId, executionMode: line.execution_mode }, status, c.actor.actorId);
  }
  return updated as LineRow;
}
