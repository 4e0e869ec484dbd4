import type { Knex } from 'knex';
import { z } from 'zod';
import { badRequest } from '../errors';
import type { Principal } from '../auth/principal';
import { toMinor } from '../db/knex';
import { periodOf, readWallet } from '../wallet/ledger';
import { decideTier, PLATFORM_FEE_MINOR } from './fees';

export const SummaryQuerySchema = z.strictObject({
  period: z
    .string()
    .regex(/^\d{4}-(0[1-9]|1[0-2])$/, 'a month as YYYY-MM')
    .optional(),
});

/**
 * Spec 25: one month's media spend, the fees accrued on it (read from the ledger, where they
 * were recorded as spend was captured), asset charges apart, and the wallet now.
 */
export async function billingSummary(db: Knex, p: Principal, query: z.infer<typeof SummaryQuerySchema>) {
  const current = periodOf(new Date());
  const period = query.period ?? current;
  if (period > current) {
    throw badRequest(`${period} has not started; ask for ${current} or an earlier month.`, [
      { path: 'query.period', message: 'must not be in the future' },
    ]);
  }
  const rows = await db('wallet_entries')
    .where({ advertiser_id: p.advertiserId, period })
    .whereIn('kind', ['capture', 'management_fee', 'platform_fee', 'asset_charge'])
    .groupBy('kind')
    .select('kind', db.raw('sum(amount_minor) as total'));
  const sum = (kind: string) => toMinor(rows.find((r) => r.kind === kind)?.total ?? 0);
  const decision = await decideTier(db, p.advertiserId, period);
  const managementFeesMinor = sum('management_fee');
  const platformFeesMinor = sum('platform_fee');
  return {
    summary: {
      period,
      currency: 'GBP' as const,
      mediaSpendMinor: sum('capture'),
      managementFeesMinor,
      platformFeesMinor,
      feesMinor: managementFeesMinor + platformFeesMinor,
      assetChargesMinor: sum('asset_charge'),
      tier: {
        name: decision.tier,
        managementFeePercent: decision.tier === 'scale' ? 5 : 10,
        platformFeeMinor: decision.tier === 'scale' ? PLATFORM_FEE_MINOR : 0,
        rule: decision.rule,
        trailing: decision.trailing,
        trailingSpendMinor: decision.trailingSpendMinor,
      },
      wallet: await readWallet(db, p.advertiserId),
    },
  };
}
