import type { Knex } from 'knex';
import { conflict } from '../errors';
import { toMinor } from '../db/knex';

/**
 * Takes funds out of the advertiser's available balance, or refuses with 409. The guarded
 * update (available >= amount) does the concurrency work: two reservations cannot both
 * take the same funds.
 */
export async function reserveFunds(trx: Knex, advertiserId: string, amountMinor: number, what: string): Promise<void> {
  await trx('wallets').insert({ advertiser_id: advertiserId }).onConflict('advertiser_id').ignore();
  const updated = await trx('wallets')
    .where({ advertiser_id: advertiserId })
    .andWhereRaw('balance_minor - reserved_minor >= ?', [amountMinor])
    .update({ reserved_minor: trx.raw('reserved_minor + ?', [amountMinor]), updated_at: trx.fn.now() })
    .returning('advertiser_id');
  if (!updated.length) {
    const w = await trx('wallets').where({ advertiser_id: advertiserId }).first();
    const available = toMinor(w.balance_minor) - toMinor(w.reserved_minor);
    throw conflict(`The wallet has ${available} available; ${what} needs ${amountMinor}. Fund the wallet first.`, 'unfunded');
  }
}

/** Reserves a live booking's whole commitment. */
export async function reserveCommitment(trx: Knex, advertiserId: string, bookingId: string, amountMinor: number): Promise<void> {
  await reserveFunds(trx, advertiserId, amountMinor, 'this launch');
  await trx('wallet_reservations').insert({ booking_id: bookingId, advertiser_id: advertiserId, amount_minor: amountMinor });
}
