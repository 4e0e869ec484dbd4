import type { Knex } from 'knex';
import { z } from 'zod';
import { findAdapter } from '../adapters/catalogue';
import type { Principal } from '../auth/principal';
import { toCsv } from '../csv';
import { toMinor } from '../db/knex';
import { lastDayOfPeriod } from '../delivery/finality';
import { notFound } from '../errors';
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

interface Row {
  id: string | null;
  booking_id: string;
  campaign_id: string;
  campaign_name: string;
  channel: string;
  execution_mode: 'sandbox' | 'live';
  budget_minor: string;
  closed: boolean;
  final_minor: string;
  final_impressions: string;
  provisional_minor: string;
  provisional_impressions: string;
  billable_minor: string;
  captured_minor: string;
  fees_minor: string;
  invoice_line_id: string | null;
  invoiced_minor: string;
  [total: `t_${string}`]: string | number;
}

/**
 * The seller's lines that ran in the month, each with its figures (a closed month's as it closed,
 * an open one's as its days stand), its money and its invoice line's amount; the totals over all
 * of them; and the page asked for. Each line's figures are one row of `line_month_totals`, kept
 * with its days, closes and invoice lines, and its money one row of `line_money_totals`, kept with
 * the ledger (migrations/20261130300200_line_month_totals.ts): no day or entry is read.
 * Captured spend is allocated to months in order, as it followed the billable figure; a month's
 * fees are the line's fees in that proportion, rounded half up.
 */
const STATEMENT = `
with lines as (
  select l.id, l.booking_id, b.campaign_id, l.channel, l.execution_mode, l.budget_minor, b.submitted_at, l.position
    from booking_lines l
    join bookings b on b.id = l.booking_id
    join campaigns c on c.id = b.campaign_id
   where l.advertiser_id = :workspace and l.adapter_key = :seller and (l.confirmed_at is not null or l.status = 'confirmed')
     and c.start_date <= cast(:to as date) and c.end_date >= cast(:from as date)
),
earlier as (
  select line_id, sum(final_minor + provisional_minor) as spent from line_month_totals
   where advertiser_id = :workspace and adapter_key = :seller and period < :period group by line_id
),
per as (
  select l.id, l.budget_minor, coalesce(t.closed, false) as closed, coalesce(t.invoiced_minor, 0) as invoiced_minor,
         t.invoice_line_id, coalesce(e.spent, 0) as before_minor,
         case when t.closed then t.closed_final_minor else coalesce(t.final_minor, 0) end as final_minor,
         case when t.closed then t.closed_final_impressions else coalesce(t.final_impressions, 0) end as final_impressions,
         case when t.closed then 0 else coalesce(t.provisional_minor, 0) end as provisional_minor,
         case when t.closed then 0 else coalesce(t.provisional_impressions, 0) end as provisional_impressions,
         t.closed_billable_minor, t.closed_billable_before_minor,
         case when l.execution_mode = 'live' then coalesce(m.captured_minor, 0) else 0 end as captured,
         case when l.execution_mode = 'live' then coalesce(m.fees_minor, 0) else 0 end as fees
    from lines l
    left join line_month_totals t on t.line_id = l.id and t.period = :period
    left join earlier e on e.line_id = l.id
    left join line_money_totals m on m.advertiser_id = :workspace and m.line_id = l.id
),
billed as (
  select per.*,
         case when closed then closed_billable_minor
              else least(before_minor + final_minor + provisional_minor, budget_minor) - least(before_minor, budget_minor) end as billable_minor,
         case when closed then closed_billable_before_minor else least(before_minor, budget_minor) end as billable_before_minor
    from per
),
priced as (
  select billed.*, greatest(0, least(captured - billable_before_minor, billable_minor)) as captured_minor from billed
),
figures as (
  select priced.*, case when captured > 0 and captured_minor > 0
           then floor((2::numeric * fees * captured_minor / captured + 1) / 2) else 0 end as fees_minor
    from priced
),
totals as (
  select count(*) as t_lines, count(*) filter (where closed) as t_closed,
         coalesce(sum(budget_minor), 0) as t_budget, coalesce(sum(final_minor), 0) as t_final,
         coalesce(sum(final_impressions), 0) as t_final_impressions, coalesce(sum(provisional_minor), 0) as t_provisional,
         coalesce(sum(provisional_impressions), 0) as t_provisional_impressions, coalesce(sum(billable_minor), 0) as t_billable,
         coalesce(sum(captured_minor), 0) as t_captured, coalesce(sum(fees_minor), 0) as t_fees,
         coalesce(sum(invoiced_minor), 0) as t_invoiced
    from figures
),
page as (
  select * from lines order by submitted_at, position, id limit :limit offset :offset
)
select p.id, p.booking_id, p.campaign_id, c.name as campaign_name, p.channel, p.execution_mode, f.budget_minor, f.closed,
       f.final_minor, f.final_impressions, f.provisional_minor, f.provisional_impressions, f.billable_minor,
       f.captured_minor, f.fees_minor, f.invoiced_minor, f.invoice_line_id, totals.*
  from totals
  left join page p on true
  left join figures f on f.id = p.id
  left join campaigns c on c.id = p.campaign_id
 order by p.submitted_at, p.position, p.id`;

/**
 * A seller's month for a workspace (docs/billing.md, Statements): per line that ran in the month,
 * its booked budget, delivered spend final and provisional apart, what of it is billable, what the
 * wallet captured for it and the fees on that, and its invoice line if one arrived; and the totals
 * over every line, whichever page of lines is asked for.
 */
export async function sellerStatement(
  db: Knex,
  p: Principal,
  seller: string,
  period: string,
  page: { limit: number; offset: number } = { limit: 1_000_000, offset: 0 },
): Promise<Statement> {
  if (!findAdapter(seller)) throw notFound();
  const from = `${period}-01`;
  const to = lastDayOfPeriod(period);
  const { rows: all } = (await db.raw(STATEMENT, {
    workspace: p.advertiserId,
    seller,
    period,
    from,
    to,
    limit: page.limit,
    offset: page.offset,
  })) as { rows: Row[] };
  // Every row carries the totals; a page past the last line is one row of totals alone.
  const totalsRow = all[0];
  const rows = all.filter((l): l is Row & { id: string } => l.id !== null);
  // The page's invoice lines, by key.
  const invoiceIds = rows.flatMap((l) => (l.invoice_line_id ? [l.invoice_line_id] : []));
  const invoices = new Map(
    (invoiceIds.length
      ? ((await db('invoice_lines as il')
          .join('invoices as i', 'i.id', 'il.invoice_id')
          .whereIn('il.id', invoiceIds)
          .select('il.id', 'il.invoice_id', 'i.invoice_number', 'il.status', 'il.remedy')) as Array<{
          id: string;
          invoice_id: string;
          invoice_number: string;
          status: string;
          remedy: string | null;
        }>)
      : []
    ).map((i) => [i.id, i]),
  );
  const n = (v: string | number | undefined) => toMinor(v ?? 0);
  const invoiceOf = (id: string | null) => {
    const i = id ? invoices.get(id) : undefined;
    return i ? { invoiceId: i.invoice_id, invoiceNumber: i.invoice_number, invoiceLineId: i.id, status: i.status, remedy: i.remedy } : null;
  };
  const lines = rows.map((l) => ({
    lineId: l.id,
    bookingId: l.booking_id,
    campaignId: l.campaign_id,
    campaignName: l.campaign_name,
    channel: l.channel,
    executionMode: l.execution_mode,
    budgetMinor: n(l.budget_minor),
    finalSpendMinor: n(l.final_minor),
    finalImpressions: n(l.final_impressions),
    provisionalSpendMinor: n(l.provisional_minor),
    provisionalImpressions: n(l.provisional_impressions),
    billableMinor: n(l.billable_minor),
    capturedMinor: n(l.captured_minor),
    feesMinor: n(l.fees_minor),
    invoicedMinor: n(l.invoiced_minor),
    monthClosed: l.closed,
    invoice: invoiceOf(l.invoice_line_id),
  }));
  const t = (k: string) => n(totalsRow?.[`t_${k}`]);
  return {
    seller,
    period,
    currency: 'GBP',
    from,
    to,
    totals: {
      budgetMinor: t('budget'),
      finalSpendMinor: t('final'),
      finalImpressions: t('final_impressions'),
      provisionalSpendMinor: t('provisional'),
      provisionalImpressions: t('provisional_impressions'),
      billableMinor: t('billable'),
      capturedMinor: t('captured'),
      feesMinor: t('fees'),
      invoicedMinor: t('invoiced'),
      lines: t('lines'),
      closedLines: t('closed'),
    },
    lines,
    nextOffset: page.offset + lines.length < t('lines') ? page.offset + lines.length : null,
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
