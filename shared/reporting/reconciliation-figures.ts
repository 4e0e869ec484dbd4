import type { Knex } from 'knex';
import { z } from 'zod';
import { toMinor } from '../db/knex';

export const ReconciliationFiguresSchema = z.object({
  invoices: z.object({
    received: z.number().int(),
    approved: z.number().int(),
    disputed: z.number().int(),
    resolved: z.number().int(),
    invoicedMinor: z.number().int(),
  }),
  /** Disputed invoice lines now: how many, and what they claim beyond our final figures. */
  disputedLines: z.number().int(),
  atStakeMinor: z.number().int(),
  makegoodsOwed: z.object({ count: z.number().int(), impressions: z.number().int() }),
  makegoodsExpired: z.number().int(),
  openDiscrepancies: z.number().int(),
});
export type ReconciliationFigures = z.infer<typeof ReconciliationFiguresSchema>;

/**
 * What reconciliation asks of a workspace (docs/billing.md): invoices received by state (for one
 * month, or all), disputed lines and the amount at stake on them, make-goods owed, those expired
 * unmet, and restated final days not yet taken up. Each figure one indexed query.
 */
export async function reconciliationFigures(db: Knex, advertiserId: string, period?: string): Promise<ReconciliationFigures> {
  const invoices = (await db('invoices')
    .where({ advertiser_id: advertiserId })
    .modify((q) => (period ? q.where({ period }) : q))
    .groupBy('status')
    .select('status', db.raw('count(*)::int as n'), db.raw('coalesce(sum(invoiced_minor), 0) as invoiced'))) as Array<{
    status: string;
    n: number;
    invoiced: string;
  }>;
  const by = (s: string) => invoices.find((r) => r.status === s)?.n ?? 0;
  const disputed = await db('invoice_lines')
    .where({ advertiser_id: advertiserId, status: 'disputed' })
    .modify((q) => (period ? q.where({ period }) : q))
    .first(db.raw('count(*)::int as n'), db.raw('coalesce(sum(abs(amount_minor - final_minor)), 0) as stake'));
  const owed = await db('makegoods')
    .where({ advertiser_id: advertiserId, status: 'owed' })
    .first(db.raw('count(*)::int as n'), db.raw('coalesce(sum(owed_impressions - delivered_impressions), 0) as impressions'));
  const expired = await db('makegoods').where({ advertiser_id: advertiserId, status: 'expired' }).first(db.raw('count(*)::int as n'));
  const discrepancies = await db('delivery_discrepancies')
    .where({ advertiser_id: advertiserId, status: 'open' })
    .first(db.raw('count(*)::int as n'));
  return {
    invoices: {
      received: invoices.reduce((s, r) => s + r.n, 0),
      approved: by('approved'),
      disputed: by('disputed'),
      resolved: by('resolved'),
      invoicedMinor: invoices.reduce((s, r) => s + toMinor(r.invoiced), 0),
    },
    disputedLines: Number(disputed.n),
    atStakeMinor: toMinor(disputed.stake),
    makegoodsOwed: { count: Number(owed.n), impressions: toMinor(owed.impressions) },
    makegoodsExpired: Number(expired.n),
    openDiscrepancies: Number(discrepancies.n),
  };
}
