import type { Knex } from 'knex';
import { toMinor } from '../db/knex';
import type { BookingStatus } from '../bookings/booking-status';

const DEFINITE: readonly BookingStatus[] = ['confirmed', 'partially-confirmed', 'rejected', 'stopped'];

/**
 * When a live booking first reaches a definite status, the part of its reservation that no
 * supplier will ever spend goes back to the wallet: all of it when every line was rejected,
 * otherwise the rejected lines' share. Confirmed and stopped (paused, may be enabled) lines keep theirs.
 */
export async function settleReservation(trx: Knex, bookingId: string, status: BookingStatus): Promise<void> {
  if (!DEFINITE.includes(status)) return;
  const reservation = await trx('wallet_reservations').where({ booking_id: bookingId }).whereNull('settled_at').forUpdate().first();
  if (!reservation) return;
  const amount = toMinor(reservation.amount_minor);
  const lines = await trx('booking_lines').where({ booking_id: bookingId }).select('status', 'budget_minor');
  const total = lines.reduce((s, l) => s + toMinor(l.budget_minor), 0);
  const rejected = lines.filter((l) => l.status === 'rejected').reduce((s, l) => s + toMinor(l.budget_minor), 0);
  const release = status === 'rejected' || total === 0 ? amount : Math.floor((amount * rejected) / total);
  if (release > 0) {
    await trx('wallets')
      .where({ advertiser_id: reservation.advertiser_id })
      .update({ reserved_minor: trx.raw('reserved_minor - ?', [release]), updated_at: trx.fn.now() });
  }
  await trx('wallet_reservations').where({ booking_id: bookingId }).update({ released_minor: release, settled_at: trx.fn.now() });
}
