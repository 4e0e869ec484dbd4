import type { BenchService } from './service';
import { figures } from './support';
import { seedRunning, START } from './delivery';
import { addDays } from '../shared/dates';
import { evaluateRules } from '../shared/rules/rule-evaluation';
import { loadCampaignStates } from '../shared/rules/rule-inputs';

const LINES = Number(process.env.BENCH_RULES_LINES ?? 10_000);
const PER_CAMPAIGN = 10;
const DAYS_OVER = 15;

/**
 * Rules at scale: one rule per campaign over 10,000 running lines (1,000 campaigns of 10, 15 days
 * reported, one line in ten under-delivering), evaluated in one cycle (target < 10 s). The
 * baseline, in the same run, is the cycle's own read of those lines and days: the ratio says what
 * the evaluation adds to reading the figures. A second cycle on the same day fires nothing again.
 */
export async function benchRules(service: BenchService): Promise<void> {
  const { db } = service;
  const org = 'bench-org';
  const ids = await seedRunning(db, org, 'Rules ', LINES / PER_CAMPAIGN, PER_CAMPAIGN, 30);
  // Each line spends its even share a day; the first line of each campaign half of it.
  await db.raw(
    `insert into delivery_days (line_id, day, advertiser_id, booking_id, impressions, clicks, completions, spend_minor, source, as_of)
     select l.id, ?::date + d, l.advertiser_id, l.booking_id, 1000, 10, 0,
       (l.budget_minor / 30) / (case when l.position = 0 then 2 else 1 end), 'supplier', now()
     from booking_lines l join bookings b on b.id = l.booking_id cross join generate_series(0, ?) d
     where b.campaign_id = any(?::uuid[])`,
    [START, DAYS_OVER - 1, ids],
  );
  await db.raw(
    `insert into rules (id, advertiser_id, campaign_id, name, condition, action, guardrails, created_by)
     select gen_random_uuid(), ?, c, 'Under-delivery', ?::jsonb, ?::jsonb, ?::jsonb, 'bench' from unnest(?::uuid[]) c`,
    [
      org,
      JSON.stringify({ subject: 'line', metric: 'projected-under-delivery-percent', operator: 'above', value: 15, forDays: 2 }),
      JSON.stringify({ kind: 'move-budget', amountMinor: 10_000 }),
      JSON.stringify({ maxMovedPerDayMinor: 10_000, maxMovedPerFlightMinor: 30_000, minLineBudgetMinor: 50_000, cooldownDays: 2 }),
      ids,
    ],
  );
  await db.raw('analyze');
  const real = new Date(`${addDays(START, DAYS_OVER)}T06:00:00Z`);
  const opts = { tolerance: 0.15, pollEveryMs: 900_000, advertiserId: org, real };

  let started = performance.now();
  await loadCampaignStates(db, ids, real);
  const readSeconds = (performance.now() - started) / 1000;
  started = performance.now();
  const first = await evaluateRules(db, opts);
  const seconds = (performance.now() - started) / 1000;
  started = performance.now();
  const again = await evaluateRules(db, opts);
  const againSeconds = (performance.now() - started) / 1000;
  const once = first.fired === LINES / PER_CAMPAIGN && again.fired === 0;
  console.log(`\nRules: ${first.rules} rules over ${LINES} running lines, ${DAYS_OVER} days reported`);
  console.log(
    `cycle ${seconds.toFixed(2)} s (target < 10 s): ${seconds < 10 ? 'met' : 'NOT met'}; reading the figures alone ${readSeconds.toFixed(2)} s (ratio ${(seconds / readSeconds).toFixed(1)}); ${first.fired} fired (notify-only), a second cycle ${againSeconds.toFixed(2)} s fired ${again.fired}: ${once ? 'once each' : 'NOT once'}`,
  );
  figures.push({
    name: `rule cycle, ${LINES} running lines`,
    value: seconds,
    unit: 's',
    baseline: readSeconds,
    ratio: seconds / readSeconds,
    target: '< 10 s',
    met: seconds < 10 && once,
  });
}
