import type { Knex } from 'knex';
import { conflict, notFound } from '../errors';
import type { Actor } from '../actor';
import { appendEvent } from './booking-events';
import { bookingStatusOf } from './booking-status';
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
  /** Extra checks on the locked line before it changes (e.g. "only workflow lines"). */
  guard?: (line: LineRow) => void;
}

/**
 * Locks a booking and then its line, the one lock order every path uses (booking, then lines
 * by id), so that deciding on a line always reads it as it is.
 */
export async function lockLine(
  trx: Knex,
  bookingId: string,
  lineId: string,
): Promise<{ booking: { id: string; status: string }; line: LineRow } | null> {
  const booking = await trx('bookings').where({ id: bookingId }).forUpdate().first('id', 'status');
  if (!booking) return null;
  const line = (await trx<LineRow>('booking_lines').where({ id: lineId, booking_id: bookingId }).forUpdate().first()) as
    LineRow | undefined;
  return line ? { booking, line } : null;
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

  const [updated] = (await trx('booking_lines')
    .where({ id: line.id, version: line.version })
    .update({ ...(c.patch ?? {}), ...(c.to ? { status: c.to } : {}), version: line.version + 1, updated_at: trx.fn.now() })
    .returning('*')) as LineRow[];
  if (!updated) throw conflict('The line changed while this request ran. Read it again before acting.', 'version_conflict');

  if (c.to && c.to !== line.status) await settleLine(trx, updated, c.to, c.actor.actorId);

  await appendEvent(trx, {
    bookingId: c.bookingId,
    lineId: c.lineId,
    action: c.action,
    actor: c.actor,
    detail: { from: line.status, to: updated.status, ...(c.detail && typeof c.detail === 'object' ? c.detail : {}) },
  });

  // One round trip bumps the booking's version and reads its lines' statuses as this transaction
  // sees them; the status itself is written only when it changes.
  const bumped = await trx.raw<{ rows: Array<{ statuses: LineStatus[] }> }>(
    `update bookings set version = version + 1 where id = ?
     returning (select coalesce(array_agg(l.status::text), '{}') from booking_lines l where l.booking_id = bookings.id) as statuses`,
    [c.bookingId],
  );
  const status = bookingStatusOf(bumped.rows[0]!.statuses);
  if (status !== booking.status) {
    await trx('bookings').where({ id: c.bookingId }).update({ status });
    await appendEvent(trx, {
      bookingId: c.bookingId,
      action: 'booking.status-changed',
      actor: c.actor,
      detail: { from: booking.status, to: status },
    });
    await settleBooking(trx, c.bookingId, status, c.actor.actorId);
  }
  return updated;
}
