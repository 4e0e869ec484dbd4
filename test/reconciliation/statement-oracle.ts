import type { TestEnv } from '../support/api';
import type { Statement } from '../../shared/reconciliation/statement';

type LineFigures = Omit<Statement['lines'][number], 'bookingId' | 'campaignId' | 'campaignName' | 'channel' | 'executionMode' | 'invoice'>;

/**
 * A seller's month for a workspace recomputed from the rows themselves (every delivery day,
 * every ledger entry, the month's closes and invoice lines), the way docs/billing.md states it:
 * what the statement, read from its running totals, must equal.
 */
export async function statementFromRows(env: TestEnv, org: string, seller: string, period: string) {
  const from = `${period}-01`;
  const lines = (await env
    .db('booking_lines as l')
    .join('bookings as b', 'b.id', 'l.booking_id')
    .join('campaigns as c', 'c.id', 'b.campaign_id')
    .where({ 'l.advertiser_id': org, 'l.adapter_key': seller })
    .where((w) => w.whereNotNull('l.confirmed_at').orWhere('l.status', 'confirmed'))
    .where('c.start_date', '<=', env.db.raw("(cast(? as date) + interval '1 month' - interval '1 day')::date", [from]))
    .where('c.end_date', '>=', from)
    .orderBy([{ column: 'b.submitted_at' }, { column: 'l.position' }, { column: 'l.id' }])
    .select('l.id', 'l.budget_minor', 'l.execution_mode')) as Array<{ id: string; budget_minor: string; execution_mode: string }>;
  const out: LineFigures[] = [];
  for (const line of lines) {
    const budget = Number(line.budget_minor);
    const days = (await env
      .db('delivery_days')
      .where({ line_id: line.id })
      .select(env.db.raw("to_char(day, 'YYYY-MM-DD') as day"), 'spend_minor', 'impressions', 'final_at')) as Array<{
      day: string;
      spend_minor: string;
      impressions: string;
      final_at: Date | null;
    }>;
    const inMonth = days.filter((d) => d.day.startsWith(period));
    const sum = (rows: typeof days, k: 'spend_minor' | 'impressions') => rows.reduce((s, d) => s + Number(d[k]), 0);
    const before = sum(
      days.filter((d) => d.day < from),
      'spend_minor',
    );
    const final = inMonth.filter((d) => d.final_at !== null);
    const provisional = inMonth.filter((d) => d.final_at === null);
    const close = await env.db('delivery_month_closes').where({ line_id: line.id, period }).first();
    const entries = (await env
      .db('wallet_entries')
      .where({ line_id: line.id, advertiser_id: org })
      .select('kind', 'amount_minor')) as Array<{
      kind: string;
      amount_minor: string;
    }>;
    const of = (kind: string) => entries.filter((e) => e.kind === kind).reduce((s, e) => s + Number(e.amount_minor), 0);
    const live = line.execution_mode === 'live';
    const captured = live ? of('capture') - of('capture_reversal') : 0;
    const fees = live ? of('management_fee') - of('fee_credit') : 0;
    const billable = close
      ? Number(close.billable_minor)
      : Math.min(before + sum(final, 'spend_minor') + sum(provisional, 'spend_minor'), budget) - Math.min(before, budget);
    const billableBefore = close ? Number(close.billable_before_minor) : Math.min(before, budget);
    const capturedMinor = Math.max(0, Math.min(captured - billableBefore, billable));
    const invoice = await env.db('invoice_lines').where({ line_id: line.id, period }).first();
    out.push({
      lineId: line.id,
      budgetMinor: budget,
      finalSpendMinor: close ? Number(close.final_minor) : sum(final, 'spend_minor'),
      finalImpressions: close ? Number(close.final_impressions) : sum(final, 'impressions'),
      provisionalSpendMinor: close ? 0 : sum(provisional, 'spend_minor'),
      provisionalImpressions: close ? 0 : sum(provisional, 'impressions'),
      billableMinor: billable,
      capturedMinor,
      // The line's fees in the month's share of its captured spend, rounded half up.
      feesMinor: captured > 0 && capturedMinor > 0 ? Math.floor((2 * fees * capturedMinor + captured) / (2 * captured)) : 0,
      invoicedMinor: invoice ? Number(invoice.amount_minor) : 0,
      monthClosed: Boolean(close),
    });
  }
  const total = (k: keyof LineFigures) => out.reduce((s, l) => s + Number(l[k]), 0);
  return {
    lines: out,
    totals: {
      budgetMinor: total('budgetMinor'),
      finalSpendMinor: total('finalSpendMinor'),
      finalImpressions: total('finalImpressions'),
      provisionalSpendMinor: total('provisionalSpendMinor'),
      provisionalImpressions: total('provisionalImpressions'),
      billableMinor: total('billableMinor'),
      capturedMinor: total('capturedMinor'),
      feesMinor: total('feesMinor'),
      invoicedMinor: total('invoicedMinor'),
      lines: out.length,
      closedLines: out.filter((l) => l.monthClosed).length,
    },
  };
}

/** The running totals as stored, and as summed afresh from the days and the ledger. */
export async function runningTotals(env: TestEnv, org: string) {
  const stored = await env
    .db('line_month_totals')
    .where({ advertiser_id: org })
    .whereRaw('(final_minor, final_impressions, provisional_minor, provisional_impressions) <> (0, 0, 0, 0)')
    .orderBy(['line_id', 'period'])
    .select('line_id', 'period', 'final_minor', 'final_impressions', 'provisional_minor', 'provisional_impressions');
  const summed = (
    await env.db.raw(
      `select line_id, to_char(day, 'YYYY-MM') as period,
              coalesce(sum(spend_minor) filter (where final_at is not null), 0)::bigint as final_minor,
              coalesce(sum(impressions) filter (where final_at is not null), 0)::bigint as final_impressions,
              coalesce(sum(spend_minor) filter (where final_at is null), 0)::bigint as provisional_minor,
              coalesce(sum(impressions) filter (where final_at is null), 0)::bigint as provisional_impressions
         from delivery_days where advertiser_id = ? group by 1, 2
       having (sum(spend_minor), sum(impressions)) <> (0, 0) order by 1, 2`,
      [org],
    )
  ).rows;
  const money = await env
    .db('line_money_totals')
    .where({ advertiser_id: org })
    .whereRaw('(captured_minor, fees_minor) <> (0, 0)')
    .orderBy('line_id')
    .select('line_id', 'captured_minor', 'fees_minor');
  const moneySummed = (
    await env.db.raw(
      `select line_id,
              sum(case kind when 'capture' then amount_minor when 'capture_reversal' then -amount_minor else 0 end)::bigint as captured_minor,
              sum(case kind when 'management_fee' then amount_minor when 'fee_credit' then -amount_minor else 0 end)::bigint as fees_minor
         from wallet_entries where advertiser_id = ? and line_id is not null group by 1
       having (sum(case kind when 'capture' then amount_minor when 'capture_reversal' then -amount_minor else 0 end),
               sum(case kind when 'management_fee' then amount_minor when 'fee_credit' then -amount_minor else 0 end)) <> (0, 0)
        order by 1`,
      [org],
    )
  ).rows;
  const closes = await env
    .db('line_month_totals')
    .where({ advertiser_id: org, closed: true })
    .orderBy(['line_id', 'period'])
    .select(
      'line_id',
      'period',
      'closed_final_minor as final_minor',
      'closed_final_impressions as final_impressions',
      'closed_billable_minor as billable_minor',
      'closed_billable_before_minor as billable_before_minor',
    );
  const closed = await env
    .db('delivery_month_closes')
    .where({ advertiser_id: org })
    .orderBy(['line_id', 'period'])
    .select('line_id', 'period', 'final_minor', 'final_impressions', 'billable_minor', 'billable_before_minor');
  const billed = await env
    .db('line_month_totals')
    .where({ advertiser_id: org })
    .whereNotNull('invoice_line_id')
    .orderBy(['line_id', 'period'])
    .select('line_id', 'period', 'invoice_line_id as id', 'invoiced_minor as amount_minor');
  const invoiced = await env
    .db('invoice_lines')
    .where({ advertiser_id: org })
    .orderBy(['line_id', 'period'])
    .select('line_id', 'period', 'id', 'amount_minor');
  return {
    stored: { days: stored, money, closes, invoices: billed },
    summed: { days: summed, money: moneySummed, closes: closed, invoices: invoiced },
  };
}
