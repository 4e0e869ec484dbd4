import type { Knex } from 'knex';
import { z } from 'zod';
import { unprocessable } from '../errors';

/**
 * Live work with a supplier needs an active, approved credential: the workspace's own or a
 * deployment-wide one. Without it the request is refused (422) before anything is queued.
 */
export async function requireSupplierAccess(db: Knex, adapterKey: string, advertiserId: string, what: string): Promise<void> {
  const credential = await db('supplier_credentials')
    .where({ adapter_key: adapterKey, status: 'active' })
    .whereNotNull('approved_at')
    .where((q) => q.where({ advertiser_id: advertiserId }).orWhereNull('advertiser_id'))
    .first('adapter_key');
  if (!credential) {
    throw unprocessable(
      `${what} through ${adapterKey} needs approved supplier access, which this workspace does not have.`,
      'supplier_access_required',
    );
  }
}

const Domain = z
  .string()
  .max(253)
  .regex(/^(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z][a-z0-9-]{0,61}[a-z0-9]$/, 'a lower-case domain name such as acme.example');

/**
 * A workspace's account on an AdCP seller, as ops recorded it with the workspace's supplier
 * access: the AdCP account reference's brand (its domain) and the operator buying for it (a
 * domain; the brand's own when it buys directly), and the seller's own id for the account where
 * it gave one (from its portal or list_accounts, or found by the booking after sync_accounts).
 * Whether it is the sandbox account follows each booking's mode, so it is not stored.
 */
export const SellerAccountSchema = z.strictObject({
  brand: z.strictObject({ domain: Domain }),
  operator: Domain,
  account_id: z.string().min(1).max(200).optional(),
});
export type SellerAccountRecord = z.infer<typeof SellerAccountSchema>;

/** The account as the adapters name it. */
export interface SellerAccount {
  brand: { domain: string };
  operator: string;
  accountId?: string;
}

/**
 * The workspace's own approved access to an AdCP seller, naming its account there; null without
 * it. A deployment-wide credential names no brand, so it never stands in for a workspace's account.
 */
export async function sellerAccountOf(db: Knex, adapterKey: string, advertiserId: string): Promise<SellerAccount | null> {
  const row = (await db('supplier_credentials')
    .where({ adapter_key: adapterKey, status: 'active', advertiser_id: advertiserId })
    .whereNotNull('approved_at')
    .whereNotNull('account')
    .orderBy('approved_at', 'desc')
    .first('account')) as { account: unknown } | undefined;
  const parsed = SellerAccountSchema.safeParse(row?.account);
  if (!parsed.success) return null;
  const { brand, operator, account_id: accountId } = parsed.data;
  return { brand, operator, ...(accountId ? { accountId } : {}) };
}

/** Records the seller's id for the workspace's account (found by a booking), with the access that names it. */
export async function recordSellerAccountId(db: Knex, adapterKey: string, advertiserId: string, accountId: string): Promise<void> {
  await db('supplier_credentials')
    .where({ adapter_key: adapterKey, status: 'active', advertiser_id: advertiserId })
    .whereNotNull('approved_at')
    .whereNotNull('account')
    .update({ account: db.raw(`account || jsonb_build_object('account_id', ?::text)`, [accountId]) });
}

/** Buying from an AdCP seller (sandbox or live) needs approved access naming the workspace's account there. */
export async function requireSellerAccount(db: Knex, adapterKey: string, advertiserId: string): Promise<SellerAccount> {
  const account = await sellerAccountOf(db, adapterKey, advertiserId);
  if (!account) {
    throw unprocessable(
      `Buying through ${adapterKey} needs approved supplier access naming this workspace's account on the seller, which it does not have.`,
      'supplier_access_required',
    );
  }
  return account;
}
