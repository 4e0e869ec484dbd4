import { randomUUID } from 'node:crypto';
import type { Knex } from 'knex';
import { recordSellerAccountId, type SellerAccount } from '../credentials';
import type { AdcpSellerConnection } from './connection';

/** Why the seller will not take bookings for the account now; the line is refused, nothing sent. */
export class AccountNotReady extends Error {
  override readonly name = 'AccountNotReady';
}

interface SyncRow {
  account_id?: string;
  status?: string;
  action?: string;
  errors?: Array<{ code?: string; message?: string }>;
  setup?: { message?: string; url?: string };
}

/**
 * The ways a booking may name the workspace's account, in the order to try them. An account ops
 * recorded with the seller's id is named by it. Otherwise the account is declared to the seller
 * first (sync_accounts, AdCP's way for a buyer to say which brands it buys for, as their
 * operator): one that keeps it pending or refuses it refuses the booking; its answer's account id,
 * if any, is the second way, for a seller that then knows the account only by its id (sellers
 * differ: the SDK's example sellers know it by brand and operator). A seller without
 * sync_accounts, or that cannot be asked, is sent the brand and operator, as before.
 */
export async function accountNames(
  connection: AdcpSellerConnection,
  account: SellerAccount,
  mode: 'sandbox' | 'live',
  signal?: AbortSignal,
): Promise<SellerAccount[]> {
  // Declared and active once in this process: the seller knows it (by id, if it needed one, kept then).
  const key = `${mode}|${account.brand.domain}|${account.operator}`;
  if (account.accountId || connection.syncAccountsUnsupported) return [account];
  const declared = connection.declaredAccounts.get(key);
  if (declared !== undefined) return declared ? [account, { ...account, accountId: declared }] : [account];
  let result;
  try {
    result = await connection.call(
      (c) =>
        c.syncAccounts({
          idempotency_key: randomUUID(),
          accounts: [
            { brand: account.brand, operator: account.operator, billing: 'operator', ...(mode === 'sandbox' ? { sandbox: true } : {}) },
          ],
        } as never),
      { signal },
    );
  } catch {
    return [account];
  }
  if (result.status !== 'completed') {
    if (result.adcpError?.code === 'UNSUPPORTED_FEATURE') connection.syncAccountsUnsupported = true;
    return [account];
  }
  const row = ((result.data as { accounts?: SyncRow[] }).accounts ?? [])[0];
  if (!row) return [account];
  if (row.action === 'failed' || (row.status && row.status !== 'active')) {
    const why = row.errors?.map((e) => `${e.code}: ${e.message}`).join('; ') || row.setup?.message || 'no reason given';
    throw new AccountNotReady(`The seller holds the workspace's account as ${row.status ?? row.action} (${why}); nothing was sent.`);
  }
  connection.declaredAccounts.set(key, row.account_id ?? null);
  return row.account_id ? [account, { ...account, accountId: row.account_id }] : [account];
}

/** The seller knew the account only by its id: kept with the workspace's access, and named so from then on. */
export async function keepAccountName(db: Knex, adapterKey: string, advertiserId: string, recorded: SellerAccount, used: SellerAccount) {
  if (used.accountId && used.accountId !== recorded.accountId) await recordSellerAccountId(db, adapterKey, advertiserId, used.accountId);
}
