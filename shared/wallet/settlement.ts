import type { Knex } from 'knex';
import { toMinor } from '../db/knex';
import type { BookingStatus } from '../bookings/booking-status';
import type { LineStatus } from '../bookings/line-state';
import { accrueFees } from '../billing/fees';
import { lockWallet, periodOf, post } from './ledger';

const DEFINITE: readonly BookingStatus[] = ['confirmed', 'partially-confirmed', 'rejected', 'stopped'];

/**
 * A live line's money follows its status: confirmed captures its budget from the booking's
 * reservation as media spend (and accrues the fee on it); rejected releases it. Each happens
 * once per line, whatever path the line took (worker, staff, resolution). Sandbox bookings
 * hold no reservation and move no money.
 */
export async function settleLine(
  trx: Knex,
  line: { id: string; booking_id: string; budget_minor: string | number; execution_mode: 'sandbox' | 'live' },
  to: LineStatus,
  actorId: string,
): Promise<void> {
  if (line.execution_mode === 'sandbox' || (to !== 'confirmed' && to !== 'rejected')) return;
  const reservation = await trx('wallet_reservations').where({ booking_id: line.booking_id }).first();
  const amount = toMinor(line.budget_minor);
  if (!reservation || amount === 0) return;
  const advertiserId = String(reservation.advertiser_id);
  await lockWallet(trx, advertiserId);
  const period = periodOf(new Date());
  const entry = {
    advertiserId,
    amountMinor: amount,
    subjectType: 'line' as const,
    subjectId: line.id,
    bookingId: line.booking_id,
    actorId,
    period,
  };
  if (to === 'rejected') {
    await post(trx, { ...entry, kind: 'release' });
    return;
  }
  if (await post(trx, { ...entry, kind: 'capture' }))
    await accrueFees(trx, { advertiserId, captureMinor: amount, lineId: line.id, actorId, period });
}

/**
 * When a live booking first reaches a definite status, what no line will ever spend goes back
 * to the wallet: the reservation less what was captured, released, and what stopped (staged,
 * may yet be enabled) lines still hold.
 */
export async function settleBooking(
  trx: Knex,
  booking: { id: string; executionMode: 'sandbox' | 'live' },
  status: BookingStatus,
  actorId: string,
): Promise<void> {
  if (booking.executionMode === 'sandbox' || !DEFINITE.includes(status)) return;
  const bookingId = booking.id;
  const reservation = await trx('wallet_reservations').where({ booking_id: bookingId }).first();
  if (!reservation) return;
  const advertiserId = String(reservation.advertiser_id);
  await lockWallet(trx, advertiserId);
  const moved = await trx('wallet_entries')
    .where({ booking_id: bookingId })
    .first(trx.raw('coalesce(sum(reserved_delta_minor), 0) as held'));
  const holding = await trx('booking_lines')
    .where({ booking_id: bookingId, status: 'stopped' })
    .first(trx.raw('coalesce(sum(budget_minor), 0) as held'));
  const release = toMinor(moved.held) - toMinor(holding.held);
  if (release > 0) {
    await post(trx, {
      advertiserId,
      kind: 'release',
      amountMinor: release,
      subjectType: 'booking',
      subjectId: bookingId,
      bookingId,
      actorId,
    });
  }
}
