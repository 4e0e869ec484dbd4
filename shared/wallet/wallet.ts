import type { Knex } from 'knex';
import { reserve } from './ledger';

/** Reserves a live booking's whole commitment, on the ledger, or refuses with 409 `unfunded`. */
export async function reserveCommitment(
  trx: Knex,
  advertiserId: string,
  bookingId: string,
  amountMinor: number,
  actorId: string,
): Promise<void> {
  if (amountMinor > 0) {
    await reserve(trx, { advertiserId, amountMinor, subjectType: 'booking', subjectId: bookingId, bookingId, actorId }, 'this launch');
  }
  await trx('wallet_reservations').insert({ booking_id: bookingId, advertiser_id: advertiserId, amount_minor: amountMinor });
}
