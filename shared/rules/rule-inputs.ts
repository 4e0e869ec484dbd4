import type { Knex } from 'knex';
import { SYSTEM } from '../auth/actor';
import { BOOKING_CLOSED_SQL } from '../campaigns/open-booking';
import { dateOnly } from '../dates';
import { toMinor } from '../db/knex';
import { reportedDays } from '../delivery/outlook-store';
import { clockedNow } from '../workspaces/sandbox-clock';
import type { RuleCampaign, RuleLine } from './rule-condition';

export interface CampaignState extends RuleCampaign {
  advertiserId: string;
  /** Today on the campaign's clock (a sandbox workspace's test clock moves it): the evaluation day. */
  today: string;
  /**
   * Every line its suppliers report for was asked about since its day began (since the sandbox
   * clock last moved, or since midnight UTC): a rule reads a day's figures only once all are in.
   */
  fresh: boolean;
}

const CHUNK = 5_000;

/**
 * What the rules of these campaigns read, in a few queries whatever their number: each campaign's
 * flight and clock, the lines of its open booking that ran, and their reported days.
 */
export async function loadCampaignStates(db: Knex, campaignIds: readonly string[], real = new Date()): Promise<Map<string, CampaignState>> {
  const out = new Map<string, CampaignState>();
  const ids = [...new Set(campaignIds)];
  for (let i = 0; i < ids.length; i += CHUNK) {
    const chunk = ids.slice(i, i + CHUNK);
    const since = new Map<string, Date>();
    const campaigns = (await db('campaigns as c')
      .leftJoin('sandbox_clocks as sc', 'sc.advertiser_id', 'c.advertiser_id')
      .whereIn('c.id', chunk)
      .select(
        'c.id',
        'c.advertiser_id',
        'c.execution_mode',
        'sc.offset_days',
        'sc.updated_at as clock_moved_at',
        db.raw("to_char(c.start_date, 'YYYY-MM-DD') as start_date"),
        db.raw("to_char(c.end_date, 'YYYY-MM-DD') as end_date"),
      )) as Array<{
      id: string;
      advertiser_id: string;
      execution_mode: 'sandbox' | 'live';
      offset_days: number | null;
      clock_moved_at: Date | null;
      start_date: string;
      end_date: string;
    }>;
    for (const c of campaigns) {
      out.set(c.id, {
        campaignId: c.id,
        advertiserId: c.advertiser_id,
        startDate: c.start_date,
        endDate: c.end_date,
        today: dateOnly(clockedNow(c.execution_mode, Number(c.offset_days ?? 0), real)),
        fresh: true,
        lines: [],
      });
      const midnight = new Date(`${dateOnly(real)}T00:00:00Z`);
      const movedAt = c.execution_mode === 'sandbox' && c.clock_moved_at ? c.clock_moved_at : null;
      since.set(c.id, movedAt && movedAt > midnight ? movedAt : midnight);
    }
    const lines = (await db('booking_lines as l')
      .join('bookings as b', 'b.id', 'l.booking_id')
      .leftJoin('delivery_fetches as f', 'f.line_id', 'l.id')
      .whereIn('b.campaign_id', chunk)
      .whereRaw(`not ${BOOKING_CLOSED_SQL}`)
      .whereIn('l.status', ['confirmed', 'stopped'])
      .orderBy(['b.campaign_id', 'l.position'])
      .select(
        'l.id',
        'l.booking_id',
        'b.campaign_id',
        'l.budget_minor',
        'l.version',
        'l.status',
        'l.stop',
        'l.operation_id',
        'l.daily_cap_minor',
        'f.attempted_at',
        // Paused by its cap (not by a person since): the cap resumes it, so it is not idle.
        db.raw("(l.cap_paused_on is not null and l.stop->>'by' = ?) as cap_paused", [SYSTEM.actorId]),
      )) as Array<{
      id: string;
      booking_id: string;
      campaign_id: string;
      budget_minor: string;
      version: number;
      status: string;
      stop: { kind: string } | null;
      operation_id: string | null;
      daily_cap_minor: string | null;
      attempted_at: Date | null;
      cap_paused: boolean;
    }>;
    const outcomes = new Map<string, Map<string, Array<{ date: string; value: number }>>>();
    for (const o of (await db('campaign_outcomes')
      .whereIn('campaign_id', chunk)
      .groupBy('campaign_id', 'metric', 'date')
      .orderBy(['campaign_id', 'metric', 'date'])
      .select('campaign_id', 'metric', db.raw("to_char(date, 'YYYY-MM-DD') as date"), db.raw('sum(value) as value'))) as Array<{
      campaign_id: string;
      metric: string;
      date: string;
      value: number;
    }>) {
      let byMetric = outcomes.get(o.campaign_id);
      if (!byMetric) outcomes.set(o.campaign_id, (byMetric = new Map()));
      let list = byMetric.get(o.metric);
      if (!list) byMetric.set(o.metric, (list = []));
      list.push({ date: o.date, value: Number(o.value) });
    }
    for (const [id, byMetric] of outcomes) {
      const state = out.get(id);
      if (state) state.outcomes = byMetric;
    }
    const days = await reportedDays(
      db,
      lines.map((l) => l.id),
    );
    for (const l of lines) {
      const free = l.operation_id === null;
      const line: RuleLine = {
        lineId: l.id,
        bookingId: l.booking_id,
        budgetMinor: toMinor(l.budget_minor),
        version: l.version,
        running: free && l.status === 'confirmed',
        paused: free && l.status === 'stopped' && l.stop?.kind === 'pause' && !l.cap_paused,
        idle: l.status === 'stopped' && l.stop !== null && !l.cap_paused,
        dailyCapMinor: l.daily_cap_minor === null ? null : toMinor(l.daily_cap_minor),
        days: days.get(l.id) ?? [],
      };
      const state = out.get(l.campaign_id);
      if (!state) continue;
      state.lines.push(line);
      // A line never asked about (staff enter its figures, or it has no day over yet) holds nothing up.
      if (l.attempted_at && l.attempted_at < since.get(l.campaign_id)!) state.fresh = false;
    }
  }
  return out;
}
