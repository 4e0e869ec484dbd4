import type { Knex } from 'knex';
import { SYSTEM } from '../auth/actor';
import { appendEvent } from '../bookings/booking-events';
import { toMinor } from '../db/knex';
import { lockWallet, post } from '../wallet/ledger';
import { settleDelivery } from './delivery-money';
import { decideOnFinalFigures } from './control-verification';

/** Booking statuses in which no line is still being booked or changed. */
const SETTLED = ['confirmed', 'partially-confirmed', 'rejected', 'stopped'];

/**
 * Bookings whose flight ended more than the restatement window ago, on their own clock (a
 * sandbox booking's workspace test clock), whose delivered days are all final, and that are not
 * closed out yet.
 */
export async function closeoutDue(db: Knex, restatementDays: number, real = new Date(), limit = 200): Promise<string[]> {
  const rows = await db('bookings as b')
    .join('campaigns as c', 'c.id', 'b.campaign_id')
    .leftJoin('sandbox_clocks as sc', 'sc.advertiser_id', 'b.advertiser_id')
    .whereNull('b.closed_out_at')
    .whereIn('b.status', SETTLED)
    .whereRaw(
      `c.end_date + ?::int < ((?::timestamptz at time zone 'utc')::date
         + case when b.execution_mode = 'sandbox' then coalesce(sc.offset_days, 0) else 0 end)`,
      [restatementDays, real.toISOString()],
    )
    // Money settles on final numbers: a booking with a day not yet final waits (a workflow line's month for staff).
    .whereNotExists(db('delivery_days as d').whereRaw('d.booking_id = b.id and d.final_at is null'))
    .orderBy('c.end_date')
    .limit(limit)
    .select('b.id');
  return rows.map((r) => String(r.id));
}

/**
 * Closes a booking out: its changes still unproven decided on the final figures, its lines' captured spend brought to their final delivered spend, then
 * what the reservation still holds for it released (exactly the unspent), and the booking marked
 * closed out. Once: a second call finds it closed and does nothing.
 */
export async function closeOutBooking(
  db: Knex,
  bookingId: string,
  controls: { tolerancePercent: number },
): Promise<{ closed: boolean; releasedMinor: number }> {
  return db.transaction(async (trx) => {
    const booking = await trx('bookings').where({ id: bookingId }).forUpdate().first('id', 'closed_out_at', 'advertiser_id');
    if (!booking || booking.closed_out_at) return { closed: false, releasedMinor: 0 };
    if ((await decideOnFinalFigures(trx, bookingId, controls.tolerancePercent)).undecided) return { closed: false, releasedMinor: 0 };
    const lines = await trx('booking_lines').where({ booking_id: bookingId }).orderBy('position').select('id');
    for (const l of lines) await settleDelivery(trx, String(l.id), SYSTEM.actorId);
    let releasedMinor = 0;
    const reservation = await trx('wallet_reservations').where({ booking_id: bookingId }).first();
    if (reservation) {
      const advertiserId = String(reservation.advertiser_id);
      await lockWallet(trx, advertiserId);
      const held = await trx('wallet_entries')
        .where({ booking_id: bookingId })
        .first(trx.raw('coalesce(sum(reserved_delta_minor), 0) as held'));
      releasedMinor = toMinor(held.held);
      if (releasedMinor > 0) {
        await post(trx, {
          advertiserId,
          kind: 'release',
          amountMinor: releasedMinor,
          subjectType: 'closeout',
          subjectId: bookingId,
          bookingId,
          actorId: SYSTEM.actorId,
        });
      }
    }
    await trx('bookings').where({ id: bookingId }).update({ closed_out_at: trx.fn.now() });
    await appendEvent(trx, { bookingId, action: 'booking.closed-out', actor: SYSTEM, detail: { releasedMinor } });
    return { closed: true, releasedMinor };
  });
}
