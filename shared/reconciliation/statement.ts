import type { Knex } from 'knex';
import { z } from 'zod';
import { findAdapter } from '../adapters/catalogue';
import type { Principal } from '../auth/principal';
import { toCsv } from '../csv';
import { toMinor } from '../db/knex';
import { lastDayOfPeriod } from '../delivery/finality';
import { notFound } from '../errors';
import { lineMonthFigures } from './final-figures';
import { PeriodSchema, SellerSchema } from './reconciliation-views';

export const StatementParams = z.strictObject({ seller: SellerSchema, period: PeriodSchema });
/** The totals cover every line; `lines` is a page of them (the CSV has them all). */
export const StatementQuerySchema = z.strictObject({
  limit: z.coerce.number().int().min(1).max(10_000).default(200),
  /** Lines after this many (the previous page's `nextOffset`). */
  offset: z.coerce.number().int().min(0).default(0),
});

const Money = z.number().int();
const Figures = {
  budgetMinor: Money,
  finalSpendMinor: Money,
  finalImpressions: Money,
  provisionalSpendMinor: Money,
  provisionalImpressions: Money,
  billableMinor: Money,
  capturedMinor: Money,
  feesMinor: Money,
  invoicedMinor: Money,
};
export const StatementLineSchema = z.object({
  lineId: z.uuid(),
  bookingId: z.uuid(),
  campaignId: z.uuid(),
  campaignName: z.string(),
  channel: z.string(),
  executionMode: z.enum(['sandbox', 'live']),
  ...Figures,
  /** Every day of the line's flight in the month is final: its invoice can be matched. */
  monthClosed: z.boolean(),
  invoice: z
    .object({ invoiceId: z.uuid(), invoiceNumber: z.string(), invoiceLineId: z.uuid(), status: z.string(), remedy: z.string().nullable() })
    .nullable(),
});
export const StatementSchema = z
  .object({
    statement: z.object({
      seller: z.string(),
      period: z.string(),
      currency: z.literal('GBP'),
      from: z.string(),
      to: z.string(),
      totals: z.object({ ...Figures, lines: z.number().int(), closedLines: z.number().int() }),
      lines: z.array(StatementLineSchema),
      /** Where the next page of lines starts; null on the last. */
      nextOffset: z.number().int().nullable(),
    }),
  })
  .meta({ id: 'SellerStatement' });
export type Statement = z.infer<typeof StatementSchema>['statement'];

/** `amount × part / whole`, rounded half up, in integers (BigInt: the product can pass 2^53). */
function shareOf(amount: number, part: number, whole: number): number {
  if (whole <= 0 || part <= 0) return 0;
  const twice = (2n * BigInt(amount) * BigInt(part)) / BigInt(whole);
  return Number((twice + 1n) / 2n);
}

interface LineRow {
  id: string;
  booking_id: string;
  campaign_id: string;
  campaign_name: string;
  channel: string;
  execution_mode: 'sandbox' | 'live';
}

/**
 * A seller's month for a workspace (docs/billing.md, Statements): per line that ran in the month,
 * its booked budget, delivered spend final and provisional apart, what of it is billable, what the
 * wallet captured for it and the fees on that, and its invoice line if one arrived; and the totals.
 * Captured spend follows the billable figure month by month, so a month's captured share is what
 * the line captured beyond its earlier months; its fees are the line's fees in that proportion.
 */
export async function sellerStatement(
  db: Knex,
  p: Principal,
  seller: string,
  period: string,
  page: { limit: number; offset: number } = { limit: Number.MAX_SAFE_INTEGER, offset: 0 },
): Promise<Statement> {
  if (!findAdapter(seller)) throw notFound();
  const from = `${period}-01`;
  const to = lastDayOfPeriod(period);
  const lines = (await db('booking_lines as l')
    .join('bookings as b', 'b.id', 'l.booking_id')
    .join('campaigns as c', 'c.id', 'b.campaign_id')
    .where({ 'l.advertiser_id': p.advertiserId, 'l.adapter_key': seller })
    .where((w) => w.whereNotNull('l.confirmed_at').orWhere('l.status', 'confirmed'))
    .where('c.start_date', '<=', to)
    .where('c.end_date', '>=', from)
    .orderBy([{ column: 'b.submitted_at' }, { column: 'l.position' }, { column: 'l.id' }])
    .select('l.id', 'l.booking_id', 'b.campaign_id', 'c.name as campaign_name', 'l.channel', 'l.execution_mode')) as LineRow[];
  const ids = lines.map((l) => l.id);
  const figures = await lineMonthFigures(db, ids, period);
  const money = ids.length
    ? ((await db('wallet_entries')
        .where('advertiser_id', p.advertiserId)
        .whereIn('line_id', ids)
        .whereIn('kind', ['capture', 'capture_reversal', 'management_fee', 'fee_credit'])
        .groupBy('line_id')
        .select(
          'line_id',
          db.raw(
            "coalesce(sum(case kind when 'capture' then amount_minor when 'capture_reversal' then -amount_minor else 0 end), 0) as captured",
          ),
          db.raw(
            "coalesce(sum(case kind when 'management_fee' then amount_minor when 'fee_credit' then -amount_minor else 0 end), 0) as fees",
          ),
        )) as Array<{ line_id: string; captured: string; fees: string }>)
    : [];
  const moneyOf = new Map(money.map((m) => [m.line_id, { captured: toMinor(m.captured), fees: toMinor(m.fees) }]));
  const invoiced = ids.length
    ? ((await db('invoice_lines as il')
        .join('invoices as i', 'i.id', 'il.invoice_id')
        .where({ 'il.advertiser_id': p.advertiserId, 'il.period': period, 'i.adapter_key': seller })
        .select('il.id', 'il.line_id', 'il.status', 'il.remedy', 'il.amount_minor', 'i.id as invoice_id', 'i.invoice_number')) as Array<
        Record<string, string>
      >)
    : [];
  const invoiceOf = new Map(invoiced.map((r) => [r.line_id!, r]));

  const out = lines.map((l) => {
    const f = figures.get(l.id)!;
    const m = moneyOf.get(l.id) ?? { captured: 0, fees: 0 };
    // Captured spend is allocated to months in order, as it followed the billable figure.
    const capturedMinor = Math.max(0, Math.min(m.captured - f.billableBeforeMinor, f.billableMinor));
    const feesMinor = shareOf(m.fees, capturedMinor, m.captured);
    const inv = invoiceOf.get(l.id);
    return {
      lineId: l.id,
      bookingId: l.booking_id,
      campaignId: l.campaign_id,
      campaignName: l.campaign_name,
      channel: l.channel,
      executionMode: l.execution_mode,
      budgetMinor: f.budgetMinor,
      finalSpendMinor: f.finalMinor,
      finalImpressions: f.finalImpressions,
      provisionalSpendMinor: f.provisionalMinor,
      provisionalImpressions: f.provisionalImpressions,
      billableMinor: f.billableMinor,
      capturedMinor,
      feesMinor,
      invoicedMinor: inv ? toMinor(inv.amount_minor) : 0,
      monthClosed: f.closed,
      invoice: inv
        ? {
            invoiceId: inv.invoice_id!,
            invoiceNumber: inv.invoice_number!,
            invoiceLineId: inv.id!,
            status: inv.status!,
            remedy: inv.remedy ?? null,
          }
        : null,
    };
  });
  const sum = (k: keyof typeof Figures) => out.reduce((s, l) => s + l[k], 0);
  return {
    seller,
    period,
    currency: 'GBP',
    from,
    to,
    totals: {
      budgetMinor: sum('budgetMinor'),
      finalSpendMinor: sum('finalSpendMinor'),
      finalImpressions: sum('finalImpressions'),
      provisionalSpendMinor: sum('provisionalSpendMinor'),
      provisionalImpressions: sum('provisionalImpressions'),
      billableMinor: sum('billableMinor'),
      capturedMinor: sum('capturedMinor'),
      feesMinor: sum('feesMinor'),
      invoicedMinor: sum('invoicedMinor'),
      lines: out.length,
      closedLines: out.filter((l) => l.monthClosed).length,
    },
    lines: out.slice(page.offset, page.offset + page.limit),
    nextOffset: page.offset + page.limit < out.length ? page.offset + page.limit : null,
  };
}

export const STATEMENT_CSV_COLUMNS = [
  'seller',
  'period',
  'line_id',
  'booking_id',
  'campaign_id',
  'campaign_name',
  'channel',
  'execution_mode',
  'budget_minor',
  'final_spend_minor',
  'final_impressions',
  'provisional_spend_minor',
  'provisional_impressions',
  'billable_minor',
  'captured_minor',
  'fees_minor',
  'month_closed',
  'invoice_number',
  'invoiced_minor',
  'invoice_status',
];

/** The statement as CSV: one row per line, then a totals row; every text cell formula-safe. */
export function statementCsv(s: Statement): string {
  const row = (l: Statement['lines'][number]) => [
    s.seller,
    s.period,
    l.lineId,
    l.bookingId,
    l.campaignId,
    l.campaignName,
    l.channel,
    l.executionMode,
    l.budgetMinor,
    l.finalSpendMinor,
    l.finalImpressions,
    l.provisionalSpendMinor,
    l.provisionalImpressions,
    l.billableMinor,
    l.capturedMinor,
    l.feesMinor,
    l.monthClosed,
    l.invoice?.invoiceNumber ?? '',
    l.invoicedMinor,
    l.invoice?.status ?? '',
  ];
  const t = s.totals;
  const totals: Array<string | number | boolean> = [
    s.seller,
    s.period,
    'total',
    '',
    '',
    '',
    '',
    '',
    t.budgetMinor,
    t.finalSpendMinor,
    t.finalImpressions,
  ];
  totals.push(t.provisionalSpendMinor, t.provisionalImpressions, t.billableMinor, t.capturedMinor, t.feesMinor);
  totals.push(t.closedLines === t.lines, '', t.invoicedMinor, '');
  return toCsv(STATEMENT_CSV_COLUMNS, [...s.lines.map(row), totals]);
}
