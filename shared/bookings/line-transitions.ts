import type { Knex } from 'knex';
import { conflict, notFound } from '../errors';
import type { Actor } from '../actor';
import { EVENT_INSERT, eventValues } from './booking-events';
import { bookingStatusOfCounts, type BookingStatus, type LineCounts } from './booking-status';
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
 * Locks a line, the first lock of every path that changes lines: a line, then (by the change
 * itself) its booking's row, held from there to the commit. Paths that change several lines lock
 * them all first, by id. `also` is one more value the caller wants read with it (an SQL
 * expression over `b`, the booking, and `l`, the line), returned as `also`.
 */
export async function lockLine(
  trx: Knex,
  bookingId: string,
  lineId: string,
  also?: { sql: string; bindings: readonly Knex.Value[] },
): Promise<{ line: LineRow; also: unknown } | null> {
  const { rows } = await trx.raw<{ rows: Array<LineRow & { also_value?: unknown }> }>(
    `select l.*${also ? `, (${also.sql}) as also_value` : ''}
       from booking_lines l join bookings b on b.id = l.booking_id
      where l.booking_id = ? and l.id = ?
        for update of l`,
    [...(also?.bindings ?? []), bookingId, lineId],
  );
  const row = rows[0];
  if (!row) return null;
  const { also_value: extra, ...line } = row;
  return { line, also: extra };
}

export type LockedLine = NonNullable<Awaited<ReturnType<typeof lockLine>>>;

/** The booking's line counts after one line moves `from` → `to`, as an SQL expression with its bindings. */
function countsAfter(from: LineStatus, to: LineStatus): { sql: string; bindings: Knex.Value[] } {
  if (from === to) return { sql: 'line_counts', bindings: [] };
  return {
    sql: `line_counts || jsonb_build_object(?::text, coalesce((line_counts->>?)::int, 0) - 1, ?::text, coalesce((line_counts->>?)::int, 0) + 1)`,
    bindings: [from, from, to, to],
  };
}

/** Counts a booking's lines again, for counts that cannot be right; stores and returns them. */
async function recount(trx: Knex, bookingId: string): Promise<LineCounts> {
  const { rows } = await trx.raw<{ rows: Array<{ counts: LineCounts }> }>(
    `update bookings b
        set line_counts = coalesce((select jsonb_object_agg(status, n)
                                      from (select status, count(*)::int as n from booking_lines where booking_id = b.id group by status) s),
                                   '{}'::jsonb)
      where id = ? returning line_counts as counts`,
    [bookingId],
  );
  return rows[0]!.counts;
}

/**
 * The one way a line changes: under the line's row lock, check the expected version and the
 * transition; then one statement writes the line, appends its event and moves the booking's
 * version and line counts, which takes the booking's row lock until commit. A change that
 * waited for that lock sees the counts as the change before it committed them (PostgreSQL
 * applies a waiting UPDATE to the row as it then is), so the booking status computed from the
 * counts it returns counts every committed line change; a change still uncommitted is counted
 * by its own transaction, which waits for the lock behind this one.
 *
 * `held`: the line lock the caller already took in this transaction, with the line as read then
 * and not changed since; saves taking it again.
 */
export async function changeLine(trx: Knex, c: LineChange, held?: LockedLine): Promise<LineRow> {
  const locked = held ?? (await lockLine(trx, c.bookingId, c.lineId));
  if (!locked) throw notFound();
  const { line } = locked;
  if (c.expectedVersion !== undefined && c.expectedVersion !== line.version) {
    throw conflict(`The line is at version ${line.version}, not ${c.expectedVersion}. Read it again before acting.`, 'version_conflict');
  }
  c.guard?.(line);
  // A change to the status a line already has is not a transition either (a second start, a second uncertain).
  if (c.to) assertMove(line.status, c.to);

  const to = c.to ?? line.status;
  const moves = to !== line.status;
  const lineUpdate = trx('booking_lines')
    .where({ id: line.id, version: line.version })
    .update({ ...(c.patch ?? {}), ...(c.to ? { status: c.to } : {}), version: line.version + 1, updated_at: trx.fn.now() })
    .returning('*')
    .toSQL();
  const counts = countsAfter(line.status, to);
  const detail = { from: line.status, to, ...(c.detail && typeof c.detail === 'object' ? c.detail : {}) };
  const { rows } = await trx.raw<{ rows: Array<LineRow & { booking_status: BookingStatus; line_counts: LineCounts }> }>(
    `with ${c.alongside ? `alongside as (${c.alongside.sql}),` : ''}
     updated as (${lineUpdate.sql}),
     event as (${EVENT_INSERT}),
     bumped as (update bookings set version = version + 1, line_counts = ${counts.sql}
                 where id = ? and exists (select 1 from updated) returning status, line_counts)
     select updated.*, bumped.status as booking_status, bumped.line_counts from updated, bumped`,
    [...(c.alongside?.bindings ?? []), ...lineUpdate.bindings, ...eventValues({ ...c, detail }), ...counts.bindings, c.bookingId],
  );
  if (!rows[0]) throw conflict('The line changed while this request ran. Read it again before acting.', 'version_conflict');
  // The status as it is now that the lock is ours (a waiting UPDATE returns the row as it then is).
  const { booking_status: was, line_counts: after, ...updated } = rows[0];

  if (moves) await settleLine(trx, updated as LineRow, to, c.actor.actorId);

  const status = bookingStatusOfCounts(after) ?? bookingStatusOfCounts(await recount(trx, c.bookingId))!;
  if (status !== was) {
    const event = eventValues({
      bookingId: c.bookingId,
      action: 'booking.status-changed',
      actor: c.actor,
      detail: { from: was, to: status },
    });
    await trx.raw(`with status as (update bookings set status = ? where id = ?) ${EVENT_INSERT}`, [status, c.bookingId, ...event]);
    await settleBooking(trx, { id: c.bookingId, executionMode: line.execution_mode }, status, c.actor.actorId);
  }
  return updated as LineRow;
}
