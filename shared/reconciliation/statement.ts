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
  id: string;
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
  invoice_id: string | null;
  invoice_number: string | null;
  invoice_status: string | null;
  remedy: string | null;
  invoiced_minor: string;
  [total: `t_${string}`]: string | number;
}

/**
 * The seller's lines that ran in the month, each with its figures (a closed month's as it closed,
 * an open one's from its days), its money and its invoice line; and, on every row, the totals over
 * all of them (window aggregates), so that only the page asked for leaves the database.
 * Captured spend is allocated to months in order, as it followed the billable figure; a month's
 * fees are the line's fees in that proportion, rounded half up.
 */
const STATEMENT = `
with money as (
  select w.line_id,
         sum(case w.kind when 'capture' then w.amount_minor when 'capture_reversal' then -w.amount_minor else 0 end) as captured,
         sum(case w.kind when 'management_fee' then w.amount_minor when 'fee_credit' then -w.amount_minor else 0 end) as fees
    from wallet_entries w
   where w.advertiser_id = :workspace and w.kind in ('capture', 'capture_reversal', 'management_fee', 'fee_credit')
     and w.line_id in (select id from booking_lines where advertiser_id = :workspace and adapter_key = :seller and execution_mode = 'live')
   group by w.line_id
),
lines as (
  select l.id, l.booking_id, b.campaign_id, c.name as campaign_name, l.channel, l.execution_mode, l.budget_minor, b.submitted_at, l.position
    from booking_lines l
    join bookings b on b.id = l.booking_id
    join campaigns c on c.id = b.campaign_id
   where l.advertiser_id = :workspace and l.adapter_key = :seller and (l.confirmed_at is not null or l.status = 'confirmed')
     and c.start_date <= cast(:to as date) and c.end_date >= cast(:from as date)
),
-- Only lines whose month is still open are read from their days (none, once the month is final).
open_days as (
  select d.line_id,
         coalesce(sum(d.spend_minor) filter (where d.day < cast(:from as date)), 0) as before_minor,
         coalesce(sum(d.spend_minor) filter (where d.day >= cast(:from as date) and d.final_at is not null), 0) as final_minor,
         coalesce(sum(d.impressions) filter (where d.day >= cast(:from as date) and d.final_at is not null), 0) as final_impressions,
         coalesce(sum(d.spend_minor) filter (where d.day >= cast(:from as date) and d.final_at is null), 0) as provisional_minor,
         coalesce(sum(d.impressions) filter (where d.day >= cast(:from as date) and d.final_at is null), 0) as provisional_impressions
    from delivery_days d
   where d.day <= cast(:to as date)
     and d.line_id in (select id from lines where not exists (
           select 1 from delivery_month_closes x where x.line_id = lines.id and x.period = :period))
   group by d.line_id
),
per as (
  select l.*, x.line_id is not null as closed,
         coalesce(x.final_minor, o.final_minor, 0) as final_minor, coalesce(x.final_impressions, o.final_impressions, 0) as final_impressions,
         coalesce(o.provisional_minor, 0) as provisional_minor, coalesce(o.provisional_impressions, 0) as provisional_impressions,
         coalesce(x.billable_minor, least(coalesce(o.before_minor, 0) + coalesce(o.final_minor, 0) + coalesce(o.provisional_minor, 0), l.budget_minor)
                                    - least(coalesce(o.before_minor, 0), l.budget_minor)) as billable_minor,
         coalesce(x.billable_before_minor, least(coalesce(o.before_minor, 0), l.budget_minor)) as billable_before_minor,
         coalesce(m.captured, 0) as captured, coalesce(m.fees, 0) as fees,
         il.id as invoice_line_id, i.id as invoice_id, i.invoice_number, il.status as invoice_status, il.remedy,
         coalesce(il.amount_minor, 0) as invoiced_minor
    from lines l
    left join delivery_month_closes x on x.line_id = l.id and x.period = :period
    left join open_days o on o.line_id = l.id
    left join money m on m.line_id = l.id
    left join invoice_lines il on il.line_id = l.id and il.period = :period
    left join invoices i on i.id = il.invoice_id and i.adapter_key = :seller
),
priced as (
  select per.*, greatest(0, least(captured - billable_before_minor, billable_minor)) as captured_minor from per
),
shaped as (
  select priced.*, case when captured > 0 and captured_minor > 0
           then floor((2::numeric * fees * captured_minor / captured + 1) / 2) else 0 end as fees_minor
    from priced
)
select shaped.*,
       count(*) over () as t_lines, count(*) filter (where closed) over () as t_closed,
       sum(budget_minor) over () as t_budget, sum(final_minor) over () as t_final, sum(final_impressions) over () as t_final_impressions,
       sum(provisional_minor) over () as t_provisional, sum(provisional_impressions) over () as t_provisional_impressions,
       sum(billable_minor) over () as t_billable, sum(captured_minor) over () as t_captured, sum(fees_minor) over () as t_fees,
       sum(invoiced_minor) over () as t_invoiced
  from shaped
 order by submitted_at, position, id
 limit :limit offset :offset`;

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
  const run = (limit: number, offset: number) =>
    db.raw(STATEMENT, { workspace: p.advertiserId, seller, period, from, to, limit, offset }) as Promise<{ rows: Row[] }>;
  let { rows } = await run(page.limit, page.offset);
  // A page past the last line still reports the totals.
  const totalsRow = rows[0] ?? (await run(1, 0)).rows[0];
  const n = (v: string | number | undefined) => toMinor(v ?? 0);
  if (!rows.length) rows = [];
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
    invoice: l.invoice_line_id
      ? {
          invoiceId: l.invoice_id!,
          invoiceNumber: l.invoice_number!,
          invoiceLineId: l.invoice_line_id,
          status: l.invoice_status!,
          remedy: l.remedy ?? null,
        }
      : null,
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
