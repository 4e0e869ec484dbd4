import type { TestEnv } from './api';
import { ledgerSums, post, readWallet } from '../../shared/wallet/ledger';
import { ensureWorkspace } from '../../shared/workspaces/workspace-store';

/** Puts money in a workspace's wallet the way an operator's adjustment does: one ledger entry. */
export async function fundWallet(env: TestEnv, advertiserId: string, amountMinor: number): Promise<void> {
  await ensureWorkspace(env.db, advertiserId);
  await env.db.transaction((trx) =>
    post(trx, {
      advertiserId,
      kind: 'adjustment',
      amountMinor,
      subjectType: 'wallet',
      subjectId: advertiserId,
      actorId: 'test-setup',
      detail: { reason: 'test funding' },
    }),
  );
}

/** The wallet cache and the ledger's own sums, which must always agree. */
export async function walletAndLedger(env: TestEnv, advertiserId: string) {
  const wallet = await readWallet(env.db, advertiserId);
  const sums = await ledgerSums(env.db, advertiserId);
  return { wallet, sums, consistent: wallet.balanceMinor === sums.balanceMinor && wallet.reservedMinor === sums.reservedMinor };
}
