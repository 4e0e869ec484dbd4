import type { Knex } from 'knex';
import { z } from 'zod';
import { badRequest } from '../errors';
import { digestOf } from '../digest';
import type { StaffContext } from '../staff/staff-access';
import type { Booking } from './booking-schemas';
import { bookingQuery, FOLLOW_UP_SQL, loadBookings, type BookingRow } from './booking-store';

export const FulfilmentQuerySchema = z
  .strictObject({
    cursor: z.string().min(1).max(500).optional(),
    limit: z.coerce.number().int().min(1).max(100).default(50),
    status: z.enum(['active', 'all']).default('active'),
    assignee: z.enum(['all', 'me', 'unassigned']).default('all'),
    advertiserId: z.string().min(1).max(200).optional(),
    adapterKey: z.string().min(1).max(100).optional(),
    overdue: z.enum(['true', 'false']).optional(),
  })
  .meta({ id: 'FulfilmentQuery' });
export type FulfilmentQuery = z.infer<typeof FulfilmentQuerySchema>;

const OPEN_BOOKING = ['queued', 'in-progress', 'stopping'];
const OPEN_LINE = ['queued', 'in-progress', 'reconciliation-required', 'stop-requested', 'stopping'];

/** The filters a cursor was made for: a cursor cannot be replayed against a different query. */
const filterKey = (q: FulfilmentQuery) => digestOf({ ...q, cursor: null, limit: null }).slice(0, 16);

const CursorSchema = z.strictObject({ s: z.iso.datetime(), i: z.uuid(), f: z.string() });

/** Opaque to clients: the (submittedAt, id) of the last row returned, and the filters it belongs to. */
function encodeCursor(row: BookingRow, q: FulfilmentQuery): string {
  return Buffer.from(JSON.stringify({ s: row.submitted_at.toISOString(), i: row.id, f: filterKey(q) })).toString('base64url');
}

function decodeCursor(cursor: string, q: FulfilmentQuery) {
  let parsed: z.infer<typeof CursorSchema>;
  try {
    parsed = CursorSchema.parse(JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')));
  } catch {
    throw badRequest('The cursor is not one this API issued.', [{ path: 'query.cursor', message: 'invalid cursor' }], 'invalid_cursor');
  }
  if (parsed.f !== filterKey(q)) {
    throw badRequest(
      'The cursor belongs to a different set of filters.',
      [{ path: 'query.cursor', message: 'filters changed' }],
      'invalid_cursor',
    );
  }
  return parsed;
}

/**
 * The staff work queue: bookings of the member's assigned clients, oldest submission first.
 * Keyset paging on (submittedAt, id), which never change, so paging while lines change
 * neither skips nor repeats a booking.
 */
export async function listFulfilmentQueue(
  db: Knex,
  staff: StaffContext,
  q: FulfilmentQuery,
  now = new Date(),
): Promise<{ bookings: Booking[]; nextCursor: string | null }> {
  const clients = q.advertiserId ? staff.assignedAdvertiserIds.filter((id) => id === q.advertiserId) : staff.assignedAdvertiserIds;
  if (!clients.length) return { bookings: [], nextCursor: null };

  const query = bookingQuery(db).whereIn('b.advertiser_id', clients);
  // Active: something is open, or a running line has a change in hand (a budget change keeps its status).
  const pendingChange = 'exists (select 1 from booking_lines pl where pl.booking_id = b.id and pl.operation_id is not null)';
  // Or a supplier left a person something to do there (a follow-up not yet recorded done).
  const openFollowUp = `exists (select 1 from line_operations o where o.booking_id = b.id and o.follow_up_done_at is null and ${FOLLOW_UP_SQL} is not null)`;
  if (q.status === 'active') query.where((w) => w.whereIn('b.status', OPEN_BOOKING).orWhereRaw(pendingChange).orWhereRaw(openFollowUp));
  const lineExists = (build: (sub: Knex.QueryBuilder) => void) =>
    query.whereExists(function () {
      const sub = this.select(db.raw('1')).from('booking_lines as l').whereRaw('l.booking_id = b.id');
      build(sub);
    });
  if (q.assignee === 'me') lineExists((sub) => sub.where('l.assigned_to_user_id', staff.id));
  if (q.assignee === 'unassigned')
    lineExists((sub) =>
      sub.whereNull('l.assigned_to_user_id').where((w) => w.whereIn('l.status', OPEN_LINE).orWhereNotNull('l.operation_id')),
    );
  if (q.adapterKey) lineExists((sub) => sub.where('l.adapter_key', q.adapterKey!));
  if (q.overdue === 'true') query.whereIn('b.status', OPEN_BOOKING).where('b.confirmation_due_at', '<', now);
  if (q.overdue === 'false') query.where((w) => w.whereNotIn('b.status', OPEN_BOOKING).orWhere('b.confirmation_due_at', '>=', now));
  if (q.cursor) {
    const c = decodeCursor(q.cursor, q);
    query.whereRaw('(b.submitted_at, b.id) > (?::timestamptz, ?::uuid)', [c.s, c.i]);
  }
  const rows = (await query
    .orderBy([
      { column: 'b.submitted_at', order: 'asc' },
      { column: 'b.id', order: 'asc' },
    ])
    .limit(q.limit + 1)) as BookingRow[];
  const page = rows.slice(0, q.limit);
  const bookings = await loadBookings(db, page, now);
  return { bookings, nextCursor: rows.length > q.limit ? encodeCursor(page[page.length - 1]!, q) : null };
}

/**
 * What needs a person now across every client the staff member serves, whatever page of the
 * queue it sits on: bookings with a line awaiting reconciliation, or overdue while open.
 * The most overdue first.
 */
export async function listNeedingAttention(db: Knex, staff: StaffContext, limit = 50, now = new Date()): Promise<Booking[]> {
  if (!staff.assignedAdvertiserIds.length) return [];
  const rows = (await bookingQuery(db)
    .whereIn('b.advertiser_id', staff.assignedAdvertiserIds)
    .where((w) =>
      w
        .whereExists(function () {
          this.select(db.raw('1')).from('booking_lines as l').whereRaw('l.booking_id = b.id').where('l.status', 'reconciliation-required');
        })
        .orWhere((o) => o.whereIn('b.status', OPEN_BOOKING).where('b.confirmation_due_at', '<', now)),
    )
    .orderBy([
      { column: 'b.confirmation_due_at', order: 'asc' },
      { column: 'b.id', order: 'asc' },
    ])
    .limit(limit)) as BookingRow[];
  return loadBookings(db, rows, now);
}
