import type { Knex } from 'knex';
import { z } from 'zod';
import { badRequest } from '../errors';
import type { Principal } from '../auth/principal';
import { toMinor } from '../db/knex';
import { periodOf, readWallet } from '../wallet/ledger';
import { decideTier, managementFee, PLATFORM_FEE_MINOR } from '../wallet/fees';
import { deliveredSpend } from '../delivery/delivery-figures';
import { addDays } from '../dates';
import { nowFor } from '../workspaces/sandbox-clock';
import { reconciliationFigures } from './reconciliation-figures';

const lastDayOf = (period: string) => {
  const [y, m] = period.split('-').map(Number) as [number, number];
  const next = m === 12 ? `${String(y + 1).padStart(4, '0')}-01-01` : `${period.slice(0, 5)}${String(m + 1).padStart(2, '0')}-01`;
  return addDays(next, -1);
};

export const SummaryQuerySchema = z.strictObject({
  period: z
    .string()
    // No ledger entry is older than 2000, and the trailing months of any month from then on are real months.
    .regex(/^([2-9]\d{3})-(0[1-9]|1[0-2])$/, 'a month as YYYY-MM, from 2000-01')
    .optional(),
});

/**
 * Spec 25: one month's media spend, the fees accrued on it (read from the ledger, where they
 * were recorded as spend was captured), asset charges apart, and the wallet now.
 *
 * Where billing runs in sandbox mode, "now" is the workspace's sandbox test clock, as it is for
 * everything its sandbox bookings deliver: the clock's month is the default and may be asked
 * for, so a clock moved into the next month shows what that month would bill. Live billing's
 * months are real ones.
 */
export async function billingSummary(db: Knex, p: Principal, query: z.infer<typeof SummaryQuerySchema>, billingMode: 'sandbox' | 'live') {
  const current = periodOf(await nowFor(db, p.advertiserId, billingMode));
  const period = query.period ?? current;
  if (period > current) {
    throw badRequest(`${period} has not started; ask for ${current} or an earlier month.`, [
      { path: 'query.period', message: 'must not be in the future' },
    ]);
  }
  const rows = await db('wallet_entries')
    .where({ advertiser_id: p.advertiserId, period })
    .whereIn('kind', [
      'capture',
      'capture_reversal',
      'management_fee',
      'fee_credit',
      'platform_fee',
      'asset_charge',
      'seller_credit',
      'invoice_adjustment',
    ])
    .groupBy('kind')
    .select('kind', db.raw('sum(amount_minor) as total'));
  const sum = (kind: string) => toMinor(rows.find((r) => r.kind === kind)?.total ?? 0);
  const decision = await decideTier(db, p.advertiserId, period);
  // Restatements down give captured spend, and the fee on it, back in the month they happen.
  const managementFeesMinor = sum('management_fee') - sum('fee_credit');
  const platformFeesMinor = sum('platform_fee');
  const delivered = await deliveredSpend(db, p.advertiserId, `${period}-01`, lastDayOf(period));
  return {
    summary: {
      period,
      currency: 'GBP' as const,
      mediaSpendMinor: sum('capture') - sum('capture_reversal'),
      /** Live lines' delivered spend on the month's days (capped at each line's budget); captured as it is reported. */
      deliveredSpendMinor: delivered.liveMinor,
      managementFeesMinor,
      platformFeesMinor,
      feesMinor: managementFeesMinor + platformFeesMinor,
      assetChargesMinor: sum('asset_charge'),
      /** Disputes' remedies this month: sellers' credits back to the wallet, and what sellers took off reissued invoices. */
      sellerCreditsMinor: sum('seller_credit'),
      invoiceAdjustmentsMinor: sum('invoice_adjustment'),
      tier: {
        name: decision.tier,
        managementFeePercent: decision.tier === 'scale' ? 5 : 10,
        platformFeeMinor: decision.tier === 'scale' ? PLATFORM_FEE_MINOR : 0,
        rule: decision.rule,
        trailing: decision.trailing,
        trailingSpendMinor: decision.trailingSpendMinor,
      },
      wallet: await readWallet(db, p.advertiserId),
      /** The month's invoices by state, disputes and what is at stake, make-goods owed (docs/billing.md, Reconciliation). */
      reconciliation: await reconciliationFigures(db, p.advertiserId, period),
      /** Sandbox bookings move no money: what they delivered, and the fee it would accrue, apart. */
      sandbox: {
        deliveredSpendMinor: delivered.sandboxMinor,
        managementFeesMinor: managementFee(decision.tier, delivered.sandboxMinor),
      },
    },
  };
}
