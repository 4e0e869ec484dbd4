import type { SellerAccount } from '../credentials';

/**
 * The AdCP account a request speaks for: the workspace's, by the seller's own id where it gave
 * one, otherwise by brand and operator in the booking's own mode.
 */
export function accountRef(account: SellerAccount, mode: 'sandbox' | 'live') {
  if (account.accountId) return { account_id: account.accountId };
  return { brand: account.brand, operator: account.operator, ...(mode === 'sandbox' ? { sandbox: true } : {}) };
}
