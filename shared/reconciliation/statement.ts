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
  budget_minor: string;
  final_minor: string | null;
  final_impressions: string | null;
  billable_minor: string | null;
  billable_before_minor: string | null;
  captured: string;
  fees: string;
  invoice_line_id: string | null;
  invoice_id: string | null;
  invoice_number: string | null;
  invoice_status: string | null;
  remedy: string | null;
  invoiced: string | null;
}

// The seller's lines that ran in the month, with what the month's close, the ledger and the invoice say of each.
const STATEMENT_LINES = `
with money as (
  -- Live lines' captures and fees, summed once for the workspace's lines of this seller (sandbox lines have none).
  select w.line_id,
         sum(case w.kind when 'capture' then w.amount_minor when 'capture_reversal' then -w.amount_minor else 0 end) as captured,
         sum(case w.kind when 'management_fee' then w.amount_minor when 'fee_credit' then -w.amount_minor else 0 end) as fees
    from wallet_entries w
   where w.advertiser_id = ? and w.kind in ('capture', 'capture_reversal', 'management_fee', 'fee_credit')
     and w.line_id in (select id from booking_lines where advertiser_id = ? and adapter_key = ? and execution_mode = 'live')
   group by w.line_id
)
select l.id, l.booking_id, b.campaign_id, c.name as campaign_name, l.channel, l.execution_mode, l.budget_minor,
       x.final_minor, x.final_impressions, x.billable_minor, x.billable_before_minor,
       coalesce(m.captured, 0) as captured, coalesce(m.fees, 0) as fees,
       il.id as invoice_line_id, i.id as invoice_id, i.invoice_number, il.status as invoice_status, il.remedy, il.amount_minor as invoiced
  from booking_lines l
  join bookings b on b.id = l.booking_id
  join campaigns c on c.id = b.campaign_id
  left join delivery_month_closes x on x.line_id = l.id and x.period = ?
  left join money m on m.line_id = l.id
  left join invoice_lines il on il.line_id = l.id and il.period = ?
  left join invoices i on i.id = il.invoice_id and i.adapter_key = ?
 where l.advertiser_id = ? and l.adapter_key = ? and (l.confirmed_at is not null or l.status = 'confirmed')
   and c.start_date <= ?::date and c.end_date >= ?::date
 order by b.submitted_at, l.position, l.id`;

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
  // One statement for every line: its closed month's figures, its money and its invoice line.
  const { rows: lines } = (await db.raw(STATEMENT_LINES, [
    p.advertiserId,
    p.advertiserId,
    seller,
    period,
    period,
    seller,
    p.advertiserId,
    seller,
    to,
    from,
  ])) as {
    rows: LineRow[];
  };
  const open = await lineMonthFigures(
    db,
    lines.filter((l) => l.final_minor === null).map((l) => l.id),
    period,
  );
  const figuresOf = (l: LineRow) =>
    l.final_minor === null
      ? open.get(l.id)!
      : {
          budgetMinor: toMinor(l.budget_minor),
          finalMinor: toMinor(l.final_minor),
          finalImpressions: toMinor(l.final_impressions),
          provisionalMinor: 0,
          provisionalImpressions: 0,
          billableMinor: toMinor(l.billable_minor),
          billableBeforeMinor: toMinor(l.billable_before_minor),
          closed: true,
        };
  const out = lines.map((l) => {
    const f = figuresOf(l);
    const m = { captured: toMinor(l.captured), fees: toMinor(l.fees) };
    // Captured spend is allocated to months in order, as it followed the billable figure.
    const capturedMinor = Math.max(0, Math.min(m.captured - f.billableBeforeMinor, f.billableMinor));
    const feesMinor = shareOf(m.fees, capturedMinor, m.captured);
    const inv = l.invoice_line_id
      ? {
          id: l.invoice_line_id,
          invoice_id: l.invoice_id!,
          invoice_number: l.invoice_number!,
          status: l.invoice_status!,
          remedy: l.remedy,
          amount_minor: l.invoiced!,
        }
      : null;
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
