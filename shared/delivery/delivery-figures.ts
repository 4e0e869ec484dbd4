import type { Knex } from 'knex';
import { addDays, dateOnly } from '../dates';
import { toMinor } from '../db/knex';
import { clockedNow, readOffsetDays } from '../workspaces/sandbox-clock';
import { pacingOf, type Pacing } from './pacing';
import { outlookOf, type Outlook } from './outlook';
import { reportedDays } from './outlook-store';

/**
 * A workspace's delivered spend on days `from`..`to`, live and sandbox apart (sandbox bookings
 * move no money: their figures are shown, never billed), each line's capped at its budget.
 */
export async function deliveredSpend(
  db: Knex,
  advertiserId: string,
  from: string,
  to: string,
  bookingIds?: Knex.QueryBuilder,
): Promise<{ liveMinor: number; sandboxMinor: number }> {
  const rows = await db
    .from(
      db('delivery_days as d')
        .join('booking_lines as l', 'l.id', 'd.line_id')
        .where('d.advertiser_id', advertiserId)
        .whereBetween('d.day', [from, to])
        .modify((q) => (bookingIds ? q.whereIn('d.booking_id', bookingIds) : q))
        .groupBy('l.id', 'l.execution_mode', 'l.budget_minor')
        .select('l.execution_mode', db.raw('least(sum(d.spend_minor), l.budget_minor) as spend'))
        .as('per_line'),
    )
    .groupBy('execution_mode')
    .select('execution_mode', db.raw('sum(spend) as spend'));
  const of = (mode: string) => toMinor(rows.find((r) => r.execution_mode === mode)?.spend ?? 0);
  return { liveMinor: of('live'), sandboxMinor: of('sandbox') };
}

export interface LinePacing {
  campaignId: string;
  bookingId: string;
  lineId: string;
  channel: string;
  adapterKey: string;
  executionMode: 'sandbox' | 'live';
  budgetMinor: number;
  deliveredSpendMinor: number;
  pacing: Pacing;
  /** Read only when asked for (`runningLinePacing` with `outlook`): it reads each line's days. */
  outlook?: Outlook;
}

/**
 * Running lines (confirmed, their flight under way on their own clock) whose pacing is off by
 * more than `tolerance`, worst first. `campaignIds` limits them to campaigns the caller may see.
 */
export async function linesOffPace(
  db: Knex,
  advertiserId: string,
  campaignIds: Knex.QueryBuilder,
  tolerance: number,
  real = new Date(),
): Promise<LinePacing[]> {
  const lines = await runningLinePacing(db, advertiserId, (q) => q.whereIn('b.campaign_id', campaignIds), tolerance, real);
  return lines
    .filter((l) => l.pacing.status !== 'on-track')
    .sort((a, b) => Math.abs((b.pacing.ratio ?? 1) - 1) - Math.abs((a.pacing.ratio ?? 1) - 1));
}

/** The pacing of the workspace's running lines that `scope` selects (in flight on their own clock). */
export async function runningLinePacing(
  db: Knex,
  advertiserId: string,
  scope: (q: Knex.QueryBuilder) => Knex.QueryBuilder,
  tolerance: number,
  real = new Date(),
  opts: { outlook?: boolean } = {},
): Promise<LinePacing[]> {
  const offset = await readOffsetDays(db, advertiserId);
  // The last whole day delivered, on each mode's clock (a sandbox workspace may have moved its own).
  const through = {
    sandbox: addDays(dateOnly(clockedNow('sandbox', offset, real)), -1),
    live: addDays(dateOnly(clockedNow('live', offset, real)), -1),
  };
  const inFlight = (q: Knex.QueryBuilder, mode: 'sandbox' | 'live') =>
    q.where('l.execution_mode', mode).where('c.start_date', '<=', through[mode]).where('c.end_date', '>=', through[mode]);
  // Only lines in their flight are read: a workspace's past and future lines cost nothing here.
  const rows = await db('booking_lines as l')
    .join('bookings as b', 'b.id', 'l.booking_id')
    .join('campaigns as c', 'c.id', 'b.campaign_id')
    .where('l.advertiser_id', advertiserId)
    .where('l.status', 'confirmed')
    .whereNull('b.closed_out_at')
    .where((w) => w.where((q) => inFlight(q, 'sandbox')).orWhere((q) => inFlight(q, 'live')))
    .modify(scope)
    .select(
      'l.id',
      'l.booking_id',
      'b.campaign_id',
      'l.channel',
      'l.adapter_key',
      'l.execution_mode',
      'l.budget_minor',
      'l.daily_cap_minor',
      db.raw("to_char(c.start_date, 'YYYY-MM-DD') as start_date"),
      db.raw("to_char(c.end_date, 'YYYY-MM-DD') as end_date"),
      db.raw('(select coalesce(sum(spend_minor), 0) from delivery_days d where d.line_id = l.id) as delivered'),
    );
  // The outlook reads each line's days; the overview's and the optimizations' pacing do not need it.
  const days = opts.outlook
    ? await reportedDays(
        db,
        (rows as Array<{ id: string }>).map((r) => r.id),
        through,
      )
    : null;
  const lines: LinePacing[] = [];
  for (const r of rows) {
    const budgetMinor = toMinor(r.budget_minor);
    const deliveredSpendMinor = toMinor(r.delivered);
    const flight = {
      budgetMinor,
      startDate: r.start_date,
      endDate: r.end_date,
      through: through[r.execution_mode as 'sandbox' | 'live'],
      idle: false,
    };
    const pacing = pacingOf({ ...flight, deliveredMinor: deliveredSpendMinor }, tolerance);
    const dailyCapMinor = r.daily_cap_minor === null ? null : toMinor(r.daily_cap_minor);
    const outlook = days ? outlookOf({ ...flight, days: days.get(r.id) ?? [], dailyCapMinor }, tolerance) : undefined;
    lines.push({
      campaignId: r.campaign_id,
      bookingId: r.booking_id,
      lineId: r.id,
      channel: r.channel,
      adapterKey: r.adapter_key,
      executionMode: r.execution_mode,
      budgetMinor,
      deliveredSpendMinor,
      pacing,
      ...(outlook ? { outlook } : {}),
    });
  }
  return lines;
}
