import type { Knex } from 'knex';
import { toMinor } from '../db/knex';
import { conflict } from '../errors';
import type { BookingStatus } from './booking-status';
import type { LineStatus } from './lines/state';
import { lockWallet, periodOf, post } from '../wallet/ledger';

const DEFINITE: readonly BookingStatus[] = ['confirmed', 'partially-confirmed', 'rejected', 'stopped'];

/**
 * A live line's money follows its status and its delivery: confirmed keeps its budget reserved
 * (spend is captured from delivery as the supplier reports it, `delivery/delivery-money.ts`);
 * rejected gives back what it never spent. Each happens once per line, whatever path the line
 * took (worker, staff, resolution). Sandbox bookings hold no reservation and move no money.
 */
export async function settleLine(
  trx: Knex,
  line: { id: string; booking_id: string; budget_minor: string | number; execution_mode: 'sandbox' | 'live' },
  to: LineStatus,
  actorId: string,
): Promise<void> {
  if (line.execution_mode === 'sandbox' || to !== 'rejected') return;
  const reservation = await trx('wallet_reservations').where({ booking_id: line.booking_id }).first();
  if (!reservation) return;
  const advertiserId = String(reservation.advertiser_id);
  await lockWallet(trx, advertiserId);
  const amount = toMinor(line.budget_minor) - (await lineSpentMinor(trx, line));
  if (amount <= 0) return;
  await post(trx, {
    advertiserId,
    kind: 'release',
    amountMinor: amount,
    subjectType: 'line',
    subjectId: line.id,
    bookingId: line.booking_id,
    lineId: line.id,
    actorId,
    period: periodOf(new Date()),
  });
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
  // Every line that was not rejected keeps what it has not yet spent until closeout: running
  // and paused lines may spend it, and an ended line's last days may still be restated.
  const holding = await trx('booking_lines')
    .where({ booking_id: bookingId })
    .whereNot({ status: 'rejected' })
    .first(trx.raw('coalesce(sum(budget_minor), 0) as held'));
  const release = toMinor(moved.held) - (toMinor(holding.held) - (await bookingSpentMinor(trx, bookingId, { rejected: false })));
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

/**
 * A live budget increase holds its difference from the wallet, in the transaction that asks
 * for it, or is refused with 409 `insufficient_funds` and nothing is asked of the supplier.
 */
export async function reserveBudgetIncrease(
  trx: Knex,
  op: { id: string; advertiserId: string; bookingId: string; increaseMinor: number },
  actorId: string,
): Promise<void> {
  if (op.increaseMinor <= 0) return;
  const wallet = await lockWallet(trx, op.advertiserId);
  if (wallet.availableMinor < op.increaseMinor) {
    throw conflict(
      `The wallet has ${wallet.availableMinor} available; this budget increase needs ${op.increaseMinor}. Fund the wallet first.`,
      'insufficient_funds',
    );
  }
  await post(trx, {
    advertiserId: op.advertiserId,
    kind: 'reservation',
    amountMinor: op.increaseMinor,
    subjectType: 'line_operation',
    subjectId: op.id,
    bookingId: op.bookingId,
    actorId,
  });
}

/**
 * What a settled line operation does to money: a budget increase that was not applied gives its
 * held difference back; a budget decrease the supplier applied gives back what the line may no
 * longer spend (its old budget less the larger of its new budget and what it has spent), so money
 * moved between lines is held once. Sandbox lines hold nothing. Each movement happens once per
 * operation (the ledger's unique subject), however many times the outcome is recorded.
 */
export async function lineOperationMoney(
  trx: Knex,
  line: { id: string; booking_id: string; execution_mode: 'sandbox' | 'live' },
  op: {
    id: string;
    kind: string;
    advertiser_id: string;
    budget_from_minor: string | number | null;
    budget_to_minor: string | number | null;
  },
  outcome: 'applied' | 'refused',
  actorId: string,
): Promise<void> {
  if (line.execution_mode === 'sandbox' || op.kind !== 'change-budget') return;
  const from = toMinor(op.budget_from_minor);
  const to = toMinor(op.budget_to_minor);
  const increase = to - from;
  let amountMinor: number;
  if (outcome === 'refused' && increase > 0) {
    await lockWallet(trx, op.advertiser_id);
    amountMinor = increase;
  } else if (outcome === 'applied' && increase < 0) {
    if (!(await trx('wallet_reservations').where({ booking_id: line.booking_id }).first('booking_id'))) return;
    // Under the wallet's lock, so the spend read is the spend captured.
    await lockWallet(trx, op.advertiser_id);
    amountMinor = from - Math.max(to, await lineSpentMinor(trx, line));
  } else return;
  if (amountMinor <= 0) return;
  await post(trx, {
    advertiserId: op.advertiser_id,
    kind: 'release',
    amountMinor,
    subjectType: 'line_operation',
    subjectId: op.id,
    bookingId: line.booking_id,
    actorId,
  });
}

const CAPTURED = "coalesce(sum(case when kind = 'capture' then amount_minor else -amount_minor end), 0) as spent";

/**
 * What a line has spent so far: its captured media spend (captures from delivery less what
 * restatements gave back; a capture at confirmation, from before spend followed delivery).
 * A sandbox line captures nothing: what it spent is its delivered spend, capped at its budget.
 */
export async function lineSpentMinor(
  trx: Knex,
  line: { id: string; execution_mode?: 'sandbox' | 'live'; budget_minor?: string | number },
): Promise<number> {
  if (line.execution_mode === 'sandbox') {
    const row = await trx('delivery_days').where({ line_id: line.id }).first(trx.raw('coalesce(sum(spend_minor), 0) as spent'));
    return Math.min(toMinor(row.spent), toMinor(line.budget_minor ?? Number.MAX_SAFE_INTEGER));
  }
  const row = await trx('wallet_entries')
    .whereIn('kind', ['capture', 'capture_reversal'])
    .where((w) => w.where({ line_id: line.id }).orWhere({ kind: 'capture', subject_type: 'line', subject_id: line.id }))
    .first(trx.raw(CAPTURED));
  return toMinor(row.spent);
}

/** A booking's captured media spend, every line together (or only its lines that were not rejected). */
export async function bookingSpentMinor(trx: Knex, bookingId: string, only: { rejected?: false } = {}): Promise<number> {
  const row = await trx('wallet_entries')
    .where({ booking_id: bookingId })
    .whereIn('kind', ['capture', 'capture_reversal'])
    .modify((q) =>
      only.rejected === false
        ? q.where((w) =>
            w
              .whereNull('line_id')
              .orWhereNotIn('line_id', trx('booking_lines').where({ booking_id: bookingId, status: 'rejected' }).select('id')),
          )
        : q,
    )
    .first(trx.raw(CAPTURED));
  return toMinor(row.spent);
}
