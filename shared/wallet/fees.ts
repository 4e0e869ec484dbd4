import type { Knex } from 'knex';
import { toMinor } from '../db/knex';
import { post } from './ledger';

/**
 * Flightdeck's fees on media spend (docs/billing.md). The standard tier is 10% of media
 * spend; the scale tier is 5% plus a 749 GBP platform fee per month, and applies to a month
 * when the media spend of the trailing full months before it reaches the configured
 * threshold. Fees accrue in the ledger as spend is captured, so that a month's fees always
 * equal fee(that month's media spend): the summary reads them back, never recomputes them.
 */
export const PLATFORM_FEE_MINOR = 74_900;

export interface BillingTerms {
  scaleTrailingMonths: number;
  scaleThresholdMinor: number;
}

export type Tier = 'standard' | 'scale';

/** Percentage of `amount`, rounded half up, in integers only. */
export const percentHalfUp = (amount: number, percent: number) => Math.floor((amount * percent + 50) / 100);

/** The period's management fee on its total media spend (the platform fee is separate). */
export const managementFee = (tier: Tier, spendMinor: number) => percentHalfUp(spendMinor, tier === 'scale' ? 5 : 10);

/** `YYYY-MM` of the month `n` months before `period`. */
export function monthsBefore(period: string, n: number): string {
  const [y, m] = period.split('-').map(Number) as [number, number];
  // Counted in months, not through Date: Date.UTC reads years 0–99 as 1900–1999.
  const index = y * 12 + (m - 1) - n;
  const year = Math.floor(index / 12);
  return `${String(year).padStart(4, '0')}-${String(index - year * 12 + 1).padStart(2, '0')}`;
}

export async function readTerms(db: Knex): Promise<BillingTerms> {
  const row = await db('billing_terms').where({ id: 1 }).first();
  return {
    scaleTrailingMonths: row ? Number(row.scale_trailing_months) : 3,
    scaleThresholdMinor: row ? toMinor(row.scale_threshold_minor) : 15_000_000,
  };
}

/** The deployment's terms, written by each process at start from its configuration. */
export async function saveTerms(db: Knex, terms: BillingTerms): Promise<void> {
  await db('billing_terms')
    .insert({ id: 1, scale_trailing_months: terms.scaleTrailingMonths, scale_threshold_minor: terms.scaleThresholdMinor })
    .onConflict('id')
    .merge();
}

/** Media spend by month: captures less what restatements gave back. */
export async function spendByPeriod(db: Knex, advertiserId: string, periods: string[]): Promise<Map<string, number>> {
  const rows = await db('wallet_entries')
    .where({ advertiser_id: advertiserId })
    .whereIn('kind', ['capture', 'capture_reversal'])
    .whereIn('period', periods)
    .groupBy('period')
    .select('period', db.raw("sum(case when kind = 'capture' then amount_minor else -amount_minor end) as spend"));
  const byPeriod = new Map(periods.map((p) => [p, 0]));
  for (const r of rows) byPeriod.set(String(r.period), toMinor(r.spend));
  return byPeriod;
}

export interface TierDecision {
  tier: Tier;
  rule: { trailingMonths: number; thresholdMinor: number };
  trailing: Array<{ period: string; mediaSpendMinor: number }>;
  trailingSpendMinor: number;
}

/** Which tier a period is billed on, and the figures that decided it. */
export async function decideTier(db: Knex, advertiserId: string, period: string): Promise<TierDecision> {
  const terms = await readTerms(db);
  const months = Array.from({ length: terms.scaleTrailingMonths }, (_, i) => monthsBefore(period, terms.scaleTrailingMonths - i));
  const spend = await spendByPeriod(db, advertiserId, months);
  const trailing = months.map((p) => ({ period: p, mediaSpendMinor: spend.get(p) ?? 0 }));
  const trailingSpendMinor = trailing.reduce((s, m) => s + m.mediaSpendMinor, 0);
  return {
    tier: trailingSpendMinor >= terms.scaleThresholdMinor ? 'scale' : 'standard',
    rule: { trailingMonths: terms.scaleTrailingMonths, thresholdMinor: terms.scaleThresholdMinor },
    trailing,
    trailingSpendMinor,
  };
}

/**
 * After a capture or a capture reversal (already posted, under the wallet's row lock; a reversal
 * is a negative `captureMinor`): accrue the fee, or credit it back, that brings the period's fees
 * to fee(the period's spend), and the scale tier's platform fee once.
 */
export async function accrueFees(
  trx: Knex,
  c: { advertiserId: string; captureMinor: number; lineId: string; actorId: string; period: string },
): Promise<void> {
  const { period } = c;
  const decision = await decideTier(trx, c.advertiserId, period);
  const total = (await spendByPeriod(trx, c.advertiserId, [period])).get(period) ?? 0;
  const before = total - c.captureMinor;
  const fee = managementFee(decision.tier, total) - managementFee(decision.tier, before);
  const base = { advertiserId: c.advertiserId, actorId: c.actorId, period };
  if (fee !== 0) {
    await post(trx, {
      ...base,
      kind: fee > 0 ? 'management_fee' : 'fee_credit',
      amountMinor: Math.abs(fee),
      subjectType: 'line',
      subjectId: c.lineId,
      lineId: c.lineId,
      detail: { tier: decision.tier, periodSpendMinor: total },
    });
  }
  if (decision.tier === 'scale') {
    await post(trx, { ...base, kind: 'platform_fee', amountMinor: PLATFORM_FEE_MINOR, subjectType: 'period', subjectId: period });
  }
}
