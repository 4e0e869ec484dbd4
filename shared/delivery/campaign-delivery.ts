import type { Knex } from 'knex';
import { z } from 'zod';
import type { Principal } from '../auth/principal';
import { SYSTEM } from '../auth/actor';
import { findCampaign } from '../campaigns/campaign-store';
import { addDays, dateOnly, daysFrom } from '../dates';
import { toMinor } from '../db/knex';
import { toCsv } from '../csv';
import { badRequest, notFound } from '../errors';
import { clockedNow, readOffsetDays } from '../workspaces/sandbox-clock';
import { pacingOf, PacingSchema } from './pacing';
import { capChangesOf, capOn, type CapChange } from './daily-cap-history';
import { CampaignOutlookSchema, campaignOutlookOf, outlookOf, OutlookSchema, type OutlookDay } from './outlook';

const Day = z.string().regex(/^\d{4}-\d{2}-\d{2}$/, 'a date as YYYY-MM-DD');
export const DeliveryQuerySchema = z.strictObject({ from: Day.optional(), to: Day.optional() });
export const DELIVERY_MAX_DAYS = 366;

const Figures = {
  impressions: z.number().int(),
  clicks: z.number().int(),
  completions: z.number().int(),
  spendMinor: z.number().int(),
};
export const DeliveryDaySchema = z.object({
  date: z.string(),
  ...Figures,
  /** The day's figures are final (its seller said so, its window passed, or staff closed the month): they no longer change. */
  final: z.boolean(),
  /** Spend past the line's daily cap on this day (the cap acts on figures as they arrive; a late figure can pass it): shown, never hidden. */
  overCapMinor: z.number().int(),
});

export const LineDeliverySchema = z.object({
  lineId: z.uuid(),
  bookingId: z.uuid(),
  channel: z.string(),
  adapterKey: z.string(),
  status: z.string(),
  executionMode: z.enum(['sandbox', 'live']),
  ...Figures,
  budgetMinor: z.number().int(),
  /** The most the line may spend on one UTC day; null for none (docs/delivery.md, Daily caps). */
  dailyCapMinor: z.number().int().nullable(),
  /** Spend past the daily cap on the range's days, summed. */
  overCapMinor: z.number().int(),
  /** Over the whole flight, as last reported; `spendMinor` is the range's. */
  deliveredSpendMinor: z.number().int(),
  /** Delivered beyond the budget: recorded and flagged, never billed. */
  overDeliveredMinor: z.number().int(),
  pacing: PacingSchema,
  /** Where the line ends its flight: projected spend and impressions with an interval, and a classification (docs/delivery.md, Outlook). */
  outlook: OutlookSchema,
  /** The supplier's as-of time for the latest figures; null before any arrived. */
  asOf: z.string().nullable(),
  /** When figures were last received, and whether the last ask failed (the figures then are that old). */
  fetchedAt: z.string().nullable(),
  ageSeconds: z.number().int().nullable(),
  stale: z.boolean(),
  lastError: z.string().nullable(),
  days: z.array(DeliveryDaySchema),
});
export type LineDelivery = z.infer<typeof LineDeliverySchema>;

export const CampaignDeliverySchema = z.object({
  delivery: z.object({
    campaignId: z.uuid(),
    range: z.object({ from: z.string(), to: z.string() }),
    currency: z.literal('GBP'),
    /** "Today" on the campaign's clock (a sandbox campaign's workspace test clock). */
    today: z.string(),
    totals: z.object({
      ...Figures,
      budgetMinor: z.number().int(),
      deliveredSpendMinor: z.number().int(),
      expectedSpendMinor: z.number().int(),
      projectedSpendMinor: z.number().int(),
    }),
    /** The campaign's lines' outlooks together. */
    outlook: CampaignOutlookSchema,
    /** The campaign's daily cap (its lines together, UTC days), and the range's days its lines together spent past it. */
    dailyCap: z.object({
      capMinor: z.number().int().nullable(),
      timeZone: z.literal('UTC'),
      daysOver: z.array(z.object({ date: z.string(), spendMinor: z.number().int(), overCapMinor: z.number().int() })),
    }),
    lines: z.array(LineDeliverySchema),
  }),
});
export type CampaignDelivery = z.infer<typeof CampaignDeliverySchema>['delivery'];

function append<T>(map: Map<string, T[]>, key: string, value: T): void {
  const list = map.get(key);
  if (list) list.push(value);
  else map.set(key, [value]);
}

function safeDay(value: string, path: string): string {
  const t = Date.parse(`${value}T00:00:00Z`);
  if (Number.isNaN(t) || new Date(t).toISOString().slice(0, 10) !== value) {
    throw badRequest(`${value} is not a calendar date.`, [{ path, message: 'not a calendar date' }]);
  }
  return value;
}

interface LineRow {
  id: string;
  booking_id: string;
  channel: string;
  adapter_key: string;
  status: string;
  execution_mode: 'sandbox' | 'live';
  budget_minor: string;
  daily_cap_minor: string | null;
  stop: { kind: string } | null;
  cap_paused: boolean;
  as_of: Date | null;
  succeeded_at: Date | null;
  last_error: string | null;
  delivered: string;
}

/**
 * A campaign's delivery: each line that was ever booked, its figures in the range and day by day,
 * its pacing over the whole flight, and how old its figures are. Lines are read with their
 * flight totals in one query and their days in one more.
 */
export async function campaignDelivery(
  db: Knex,
  p: Principal,
  campaignId: string,
  query: z.infer<typeof DeliveryQuerySchema>,
  tolerance: number,
  real = new Date(),
): Promise<CampaignDelivery> {
  const campaign = /^[0-9a-f-]{36}$/i.test(campaignId) ? await findCampaign(db, p, campaignId) : null;
  if (!campaign) throw notFound();
  const startDate = campaign.startDate;
  const endDate = campaign.endDate;
  const offset = await readOffsetDays(db, p.advertiserId);
  const mode = campaign.executionMode as 'sandbox' | 'live';
  const now = clockedNow(mode, offset, real);
  const today = dateOnly(now);
  const from = query.from ? safeDay(query.from, 'query.from') : startDate;
  // By default the flight so far: up to today, or its end; a flight not yet started shows its first day.
  const soFar = today < endDate ? today : endDate;
  const to = query.to ? safeDay(query.to, 'query.to') : soFar < from ? from : soFar;
  if (from > to) throw badRequest('from must not be after to.', [{ path: 'query.from', message: 'after to' }]);
  if (daysFrom(from, to) + 1 > DELIVERY_MAX_DAYS) {
    throw badRequest(`Delivery covers at most ${DELIVERY_MAX_DAYS} days at once.`, [{ path: 'query.from', message: 'range too long' }]);
  }

  const lines = (await db('booking_lines as l')
    .join('bookings as b', 'b.id', 'l.booking_id')
    .leftJoin('delivery_fetches as f', 'f.line_id', 'l.id')
    .where({ 'b.campaign_id': campaign.id, 'b.advertiser_id': p.advertiserId })
    .where((w) =>
      w
        .whereNotNull('l.confirmed_at')
        .orWhere('l.status', 'confirmed')
        .orWhereExists(db('delivery_days as d').whereRaw('d.line_id = l.id')),
    )
    .orderBy([{ column: 'b.submitted_at' }, { column: 'l.position' }])
    .select(
      'l.id',
      'l.booking_id',
      'l.channel',
      'l.adapter_key',
      'l.status',
      'l.execution_mode',
      'l.budget_minor',
      'l.daily_cap_minor',
      'l.stop',
      // Paused by its cap (not by a person since): the cap resumes it.
      db.raw("(l.cap_paused_on is not null and l.stop->>'by' = ?) as cap_paused", [SYSTEM.actorId]),
      'f.as_of',
      'f.succeeded_at',
      'f.last_error',
      db.raw('(select coalesce(sum(spend_minor), 0) from delivery_days d where d.line_id = l.id) as delivered'),
    )) as LineRow[];
  const through = addDays(today, -1);
  // One read of the days for both the range's figures and the outlook (the flight up to yesterday).
  const lastFlightDay = through < endDate ? through : endDate;
  const readFrom = from < startDate ? from : startDate;
  const readTo = to > lastFlightDay ? to : lastFlightDay;
  const dayRows = lines.length
    ? await db('delivery_days')
        .whereIn(
          'line_id',
          lines.map((l) => l.id),
        )
        .whereBetween('day', [readFrom, readTo < readFrom ? readFrom : readTo])
        .orderBy(['line_id', 'day'])
        .select(
          'line_id',
          db.raw("to_char(day, 'YYYY-MM-DD') as date"),
          'impressions',
          'clicks',
          'completions',
          'spend_minor',
          db.raw('final_at is not null as final'),
        )
    : [];
  const capChanges = await capChangesOf(db, campaign.id);
  const byLine = new Map<string, z.infer<typeof DeliveryDaySchema>[]>();
  const flight = new Map<string, OutlookDay[]>();
  for (const r of dayRows) {
    const day = {
      date: r.date as string,
      impressions: toMinor(r.impressions),
      clicks: toMinor(r.clicks),
      completions: toMinor(r.completions),
      spendMinor: toMinor(r.spend_minor),
      final: Boolean(r.final),
      overCapMinor: 0,
    };
    if (day.date >= from && day.date <= to) append(byLine, r.line_id, day);
    if (day.date >= startDate && day.date <= lastFlightDay) append(flight, r.line_id, day);
  }

  const out: LineDelivery[] = lines.map((l) => {
    const dailyCapMinor = l.daily_cap_minor === null ? null : toMinor(l.daily_cap_minor);
    const ownChanges = capChanges.filter((c) => c.lineId === l.id);
    const days = (byLine.get(l.id) ?? []).map((d) => ({
      ...d,
      overCapMinor: overCap(d.spendMinor, capOn(d.date, dailyCapMinor, ownChanges)),
    }));
    const sum = (k: 'impressions' | 'clicks' | 'completions' | 'spendMinor') => days.reduce((s, d) => s + d[k], 0);
    const budgetMinor = toMinor(l.budget_minor);
    const deliveredSpendMinor = toMinor(l.delivered);
    // A line its daily cap paused resumes at the next day's start: its outlook keeps it running.
    const idle = l.status === 'rejected' || (l.status === 'stopped' && l.stop !== null && !l.cap_paused);
    return {
      lineId: l.id,
      bookingId: l.booking_id,
      channel: l.channel,
      adapterKey: l.adapter_key,
      status: l.status,
      executionMode: l.execution_mode,
      impressions: sum('impressions'),
      clicks: sum('clicks'),
      completions: sum('completions'),
      spendMinor: sum('spendMinor'),
      budgetMinor,
      dailyCapMinor,
      overCapMinor: days.reduce((s, d) => s + d.overCapMinor, 0),
      deliveredSpendMinor,
      overDeliveredMinor: Math.max(0, deliveredSpendMinor - budgetMinor),
      pacing: pacingOf({ budgetMinor, startDate, endDate, deliveredMinor: deliveredSpendMinor, through, idle }, tolerance),
      outlook: outlookOf({ budgetMinor, startDate, endDate, through, days: flight.get(l.id) ?? [], idle, dailyCapMinor }, tolerance),
      asOf: l.as_of ? l.as_of.toISOString() : null,
      fetchedAt: l.succeeded_at ? l.succeeded_at.toISOString() : null,
      ageSeconds: l.succeeded_at ? Math.max(0, Math.floor((real.getTime() - l.succeeded_at.getTime()) / 1000)) : null,
      stale: l.last_error !== null,
      lastError: l.last_error,
      days,
    };
  });
  const total = (f: (l: LineDelivery) => number) => out.reduce((s, l) => s + f(l), 0);
  return {
    campaignId: campaign.id,
    range: { from, to },
    currency: 'GBP',
    today,
    totals: {
      impressions: total((l) => l.impressions),
      clicks: total((l) => l.clicks),
      completions: total((l) => l.completions),
      spendMinor: total((l) => l.spendMinor),
      budgetMinor: total((l) => l.budgetMinor),
      deliveredSpendMinor: total((l) => l.deliveredSpendMinor),
      expectedSpendMinor: total((l) => l.pacing.expectedSpendMinor),
      projectedSpendMinor: total((l) => l.pacing.projectedSpendMinor),
    },
    outlook: campaignOutlookOf(out, tolerance),
    dailyCap: {
      capMinor: campaign.dailyCapMinor,
      timeZone: 'UTC',
      daysOver: daysOverCap(
        out,
        campaign.dailyCapMinor,
        capChanges.filter((c) => c.lineId === null),
      ),
    },
    lines: out,
  };
}

const overCap = (spendMinor: number, capMinor: number | null) => (capMinor === null ? 0 : Math.max(0, spendMinor - capMinor));

/** The days the lines together spent past the campaign's cap in force that day. */
function daysOverCap(lines: readonly LineDelivery[], capMinor: number | null, changes: readonly CapChange[]) {
  const byDate = new Map<string, number>();
  for (const l of lines) for (const d of l.days) byDate.set(d.date, (byDate.get(d.date) ?? 0) + d.spendMinor);
  return [...byDate]
    .map(([date, spendMinor]) => ({ date, spendMinor, overCapMinor: overCap(spendMinor, capOn(date, capMinor, changes)) }))
    .filter((d) => d.overCapMinor > 0)
    .sort((a, b) => (a.date < b.date ? -1 : 1));
}

const CSV_COLUMNS = [
  'line_id',
  'booking_id',
  'channel',
  'adapter_key',
  'date',
  'impressions',
  'clicks',
  'completions',
  'spend_minor',
  'outlook',
  'projected_spend_minor',
  'projected_low_minor',
  'projected_high_minor',
  'exhaustion_date',
];

/** The same delivery as CSV: one row per line and day, each with its line's outlook. */
export function deliveryCsv(d: CampaignDelivery): string {
  const rows = d.lines.flatMap((l) =>
    l.days.map((day) => [
      l.lineId,
      l.bookingId,
      l.channel,
      l.adapterKey,
      day.date,
      day.impressions,
      day.clicks,
      day.completions,
      day.spendMinor,
      l.outlook.classification,
      l.outlook.spend.projectedMinor,
      l.outlook.spend.lowMinor ?? '',
      l.outlook.spend.highMinor ?? '',
      l.outlook.exhaustionDate ?? '',
    ]),
  );
  return toCsv(CSV_COLUMNS, rows);
}
