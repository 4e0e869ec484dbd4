import type { Knex } from 'knex';
import { conflict } from '../errors';
import { toMinor } from '../db/knex';

/**
 * The wallet ledger: every movement of money is one append-only entry, and the wallet row's
 * balance and reserved columns are a cache of the entries' sums, written in the same
 * transaction by `post` and by nothing else. Fee accruals and asset charges are invoiced
 * monthly: they are entries, but they do not move the wallet (docs/billing.md).
 */
export const ENTRY_KINDS = [
  'funding_credit',
  'reservation',
  'release',
  'capture',
  'capture_reversal',
  'management_fee',
  'fee_credit',
  'platform_fee',
  'asset_charge',
  'adjustment',
  'seller_credit',
  'invoice_adjustment',
] as const;
export type EntryKind = (typeof ENTRY_KINDS)[number];

export type SubjectType =
  | 'funding_request'
  | 'booking'
  | 'line'
  | 'line_operation'
  | 'study_approval'
  | 'asset'
  | 'period'
  | 'wallet'
  /** One movement of a line's captured spend towards its delivered spend: `<lineId>:<sequence>`. */
  | 'line_delivery'
  /** A booking's closeout: what its flight never spent goes back. */
  | 'closeout'
  /** A disputed invoice line's remedy: one entry per invoice line. */
  | 'invoice_line';

export interface NewEntry {
  advertiserId: string;
  kind: EntryKind;
  amountMinor: number;
  subjectType: SubjectType;
  subjectId: string;
  bookingId?: string;
  /** The booked line the money concerns (delivery captures and their fees). */
  lineId?: string;
  actorId: string;
  detail?: Record<string, unknown>;
  /** The UTC month the entry counts in; defaults to now. */
  period?: string;
  /** Only for `adjustment`: which way the balance moves. */
  direction?: 'credit' | 'debit';
}

/** What an entry does to the wallet's balance and reserved columns. */
function effectOf(e: NewEntry): { balance: number; reserved: number } {
  const a = e.amountMinor;
  switch (e.kind) {
    case 'funding_credit':
      return { balance: a, reserved: 0 };
    case 'reservation':
      return { balance: 0, reserved: a };
    case 'release':
      return { balance: 0, reserved: -a };
    case 'capture':
      return { balance: -a, reserved: -a };
    // A restatement down: captured spend goes back to the booking's reservation.
    case 'capture_reversal':
      return { balance: a, reserved: a };
    case 'adjustment':
      return { balance: e.direction === 'debit' ? -a : a, reserved: 0 };
    // A seller's credit note on a disputed line: money back to the workspace.
    case 'seller_credit':
      return { balance: a, reserved: 0 };
    // Accruals, and what a seller took off a reissued invoice line: recorded, not wallet movements.
    case 'management_fee':
    case 'fee_credit':
    case 'platform_fee':
    case 'asset_charge':
    case 'invoice_adjustment':
      return { balance: 0, reserved: 0 };
  }
}

export const periodOf = (d: Date) => d.toISOString().slice(0, 7);

export interface Wallet {
  balanceMinor: number;
  reservedMinor: number;
  availableMinor: number;
  currency: 'GBP';
}

/** Locks the workspace's wallet row (creating it empty), so money decisions read it as it is. */
export async function lockWallet(trx: Knex, advertiserId: string): Promise<Wallet> {
  await trx('wallets').insert({ advertiser_id: advertiserId }).onConflict('advertiser_id').ignore();
  const w = await trx('wallets').where({ advertiser_id: advertiserId }).forUpdate().first();
  return walletOf(w);
}

export function walletOf(row: { balance_minor: string | number; reserved_minor: string | number } | undefined): Wallet {
  const balance = row ? toMinor(row.balance_minor) : 0;
  const reserved = row ? toMinor(row.reserved_minor) : 0;
  return { balanceMinor: balance, reservedMinor: reserved, availableMinor: balance - reserved, currency: 'GBP' };
}

export async function readWallet(db: Knex, advertiserId: string): Promise<Wallet> {
  return walletOf(await db('wallets').where({ advertiser_id: advertiserId }).first());
}

/**
 * Appends one entry and moves the wallet cache with it. Returns false when the same money was
 * already moved (an entry that may exist once, already there): nothing changes then. A move
 * that would leave less than nothing available is refused by the wallet's check constraint.
 */
export async function post(trx: Knex, e: NewEntry): Promise<boolean> {
  if (!Number.isSafeInteger(e.amountMinor) || e.amountMinor <= 0) throw new Error(`ledger amounts are positive integers: ${e.amountMinor}`);
  const { balance, reserved } = effectOf(e);
  const inserted = await trx.raw(
    `insert into wallet_entries (advertiser_id, kind, amount_minor, balance_delta_minor, reserved_delta_minor,
       subject_type, subject_id, booking_id, line_id, period, actor_id, detail)
     values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
     on conflict do nothing returning id`,
    [
      e.advertiserId,
      e.kind,
      e.amountMinor,
      balance,
      reserved,
      e.subjectType,
      e.subjectId,
      e.bookingId ?? null,
      e.lineId ?? null,
      e.period ?? periodOf(new Date()),
      e.actorId,
      e.detail ? JSON.stringify(e.detail) : null,
    ],
  );
  if (!inserted.rows.length) return false;
  if (balance !== 0 || reserved !== 0) {
    await trx('wallets').insert({ advertiser_id: e.advertiserId }).onConflict('advertiser_id').ignore();
    await trx('wallets')
      .where({ advertiser_id: e.advertiserId })
      .update({
        balance_minor: trx.raw('balance_minor + ?', [balance]),
        reserved_minor: trx.raw('reserved_minor + ?', [reserved]),
        updated_at: trx.fn.now(),
      });
  }
  return true;
}

/**
 * Holds funds for something (a booking, a study approval), or refuses with 409 and changes
 * nothing. Under the wallet's row lock, two reservations cannot take the same funds.
 */
export async function reserve(trx: Knex, e: Omit<NewEntry, 'kind'>, what: string): Promise<void> {
  const wallet = await lockWallet(trx, e.advertiserId);
  if (wallet.availableMinor < e.amountMinor) {
    throw conflict(`The wallet has ${wallet.availableMinor} available; ${what} needs ${e.amountMinor}. Fund the wallet first.`, 'unfunded');
  }
  await post(trx, { ...e, kind: 'reservation' });
}

/** The ledger's own account of a wallet: what the cache must equal. */
export async function ledgerSums(db: Knex, advertiserId: string): Promise<{ balanceMinor: number; reservedMinor: number }> {
  const row = await db('wallet_entries')
    .where({ advertiser_id: advertiserId })
    .first(db.raw('coalesce(sum(balance_delta_minor), 0) as balance'), db.raw('coalesce(sum(reserved_delta_minor), 0) as reserved'));
  return { balanceMinor: toMinor(row.balance), reservedMinor: toMinor(row.reserved) };
}
