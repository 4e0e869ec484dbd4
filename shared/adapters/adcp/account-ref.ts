import type { SellerAccount } from '../credentials';

/** The AdCP account a request speaks for: the workspace's, in the booking's own mode. */
export function accountRef(account: SellerAccount, mode: 'sandbox' | 'live') {
  return { brand: account.brand, operator: account.operator, ...(mode === 'sandbox' ? { sandbox: true } : {}) };
}
