import type { Knex } from 'knex';
import { toMinor } from '../db/knex';
import { lineSpentMinor } from '../bookings/booking-money';
import { accrueFees } from '../wallet/fees';
import { lockWallet, periodOf, post } from '../wallet/ledger';

interface MoneyLine {
  id: string;
  booking_id: string;
  advertiser_id: string;
  budget_minor: string | number;
  execution_mode: 'sandbox' | 'live';
}

/** A line's delivered spend over its whole flight, as last reported. */
export async function deliveredSpendMinor(db: Knex, lineId: string): Promise<number> {
  const row = await db('delivery_days').where({ line_id: lineId }).first(db.raw('coalesce(sum(spend_minor), 0) as spend'));
  return toMinor(row.spend);
}

/**
 * Brings a live line's captured spend to its delivered spend, capped at its budget (what it
 * delivered beyond is recorded and flagged, never billed): one capture, or one reversal when a
 * restatement lowered it, with the fee on the difference. Under the wallet's row lock, and keyed
 * by the line's next sequence number, so the same figure never moves money twice. Nothing moves
 * for sandbox lines, nor once the booking is closed out.
 */
export async function settleDelivery(trx: Knex, lineId: string, actorId: string): Promise<number> {
  const line = (await trx('booking_lines as l')
    .join('bookings as b', 'b.id', 'l.booking_id')
    .where('l.id', lineId)
    .first('l.id', 'l.booking_id', 'l.advertiser_id', 'l.budget_minor', 'l.execution_mode', 'b.closed_out_at')) as
    (MoneyLine & { closed_out_at: Date | null }) | undefined;
  if (!line || line.execution_mode === 'sandbox' || line.closed_out_at) return 0;
  const reservation = await trx('wallet_reservations').where({ booking_id: line.booking_id }).first();
  if (!reservation) return 0;
  const advertiserId = String(reservation.advertiser_id);
  await lockWallet(trx, advertiserId);
  const target = Math.min(await deliveredSpendMinor(trx, line.id), toMinor(line.budget_minor));
  const captured = await lineSpentMinor(trx, line);
  const difference = target - captured;
  if (difference === 0) return 0;
  const [{ n }] = await trx('wallet_entries').where({ subject_type: 'line_delivery', line_id: line.id }).count({ n: '*' });
  const period = periodOf(new Date());
  const posted = await post(trx, {
    advertiserId,
    kind: difference > 0 ? 'capture' : 'capture_reversal',
    amountMinor: Math.abs(difference),
    subjectType: 'line_delivery',
    subjectId: `${line.id}:${Number(n) + 1}`,
    bookingId: line.booking_id,
    lineId: line.id,
    actorId,
    period,
    detail: { deliveredCappedMinor: target, capturedBeforeMinor: captured },
  });
  if (posted) await accrueFees(trx, { advertiserId, captureMinor: difference, lineId: line.id, actorId, period });
  return posted ? difference : 0;
}
