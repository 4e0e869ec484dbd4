import type { Knex } from 'knex';
import type { BenchService } from './service';
import { figures } from './support';
import { ADAPTER_IMPLEMENTATIONS } from '../workers/adapters/registry';
import { pollDelivery } from '../workers/delivery-poller';
import { createLogger } from '../shared/logger';
import { addDays } from '../shared/dates';

const LINES = Number(process.env.BENCH_DELIVERY_LINES ?? 10_000);
const DAYS = 30;
const REQUESTS = Number(process.env.BENCH_DELIVERY_REQUESTS ?? 200);
export const START = '2030-01-01';

export const pct = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))]!;

/** `bookings` sandbox campaigns of `perBooking` confirmed lines each (sandbox-ctv unless told), flights of `days` days from START. */
export async function seedRunning(
  db: Knex,
  org: string,
  name: string,
  bookings: number,
  perBooking: number,
  days: number,
  seller: { adapterKey: string; channel: string } = { adapterKey: 'sandbox-ctv', channel: 'ctv' },
): Promise<string[]> {
  const end = addDays(START, days - 1);
  const campaigns = await db.raw(
    `insert into campaigns (id, advertiser_id, name, client_name, start_date, end_date, budget_minor, maximum_commitment_minor,
       channels, execution_mode, status, created_by)
     select gen_random_uuid(), ?, ? || i, 'Bench', ?, ?, 1000000, 1000000, array[?], 'sandbox', 'booked', 'bench'
     from generate_series(1, ?) i returning id`,
    [org, name, START, end, seller.channel, bookings],
  );
  const ids = (campaigns.rows as Array<{ id: string }>).map((r) => r.id);
  await db.raw(
    `insert into plans (id, campaign_id, advertiser_id, status, lines)
     select gen_random_uuid(), c, ?, 'approved', '[]' from unnest(?::uuid[]) c`,
    [org, ids],
  );
  await db.raw(
    `insert into bookings (id, advertiser_id, campaign_id, plan_id, status, execution_mode, snapshot_digest, approved_snapshot,
       media_budget_minor, maximum_commitment_minor, submitted_at, confirmation_due_at, launched_by)
     select gen_random_uuid(), ?, p.campaign_id, p.id, 'confirmed', 'sandbox', repeat('a', 64), '{}', 1000000, 1000000, now(), now(), 'bench'
     from plans p where p.campaign_id = any(?::uuid[])`,
    [org, ids],
  );
  await db.raw(
    `insert into booking_lines (id, booking_id, advertiser_id, plan_line_id, position, channel_campaign_id, adapter_key, channel,
       budget_minor, execution_mode, status, confirmed_at)
     select gen_random_uuid(), b.id, b.advertiser_id, gen_random_uuid(), g, 'cc-' || gen_random_uuid(), ?, ?,
       300000 + g * 100, 'sandbox', 'confirmed', now()
     from bookings b cross join generate_series(0, ?) g where b.campaign_id = any(?::uuid[])`,
    [seller.adapterKey, seller.channel, perBooking - 1, ids],
  );
  return ids;
}

/** Sequential requests, so each latency is the service's alone. */
export async function latencies(service: BenchService, path: string): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < REQUESTS; i++) {
    const started = performance.now();
    const res = await fetch(`${service.url}${path}`, { headers: { authorization: `Bearer ${service.token}` } });
    await res.arrayBuffer();
    if (res.status !== 200) throw new Error(`${path}: ${res.status}`);
    out.push(performance.now() - started);
  }
  return out;
}

/**
 * Delivery at scale: the poller ingests 30 days for 10,000 sandbox lines (target < 60 s; each
 * line-day stored once, a second poll adds nothing), and a 50-line, 90-day campaign's delivery is
 * read (target p95 < 50 ms), beside the auth-context read measured the same way.
 */
export async function benchDelivery(service: BenchService): Promise<void> {
  const { db } = service;
  const org = 'bench-org';
  await seedRunning(db, org, 'Delivery ', LINES / 10, 10, DAYS);
  await db.raw('analyze');
  const options = {
    batchSize: 500,
    restatementDays: DAYS,
    finalizationHours: 72,
    callsPerSecond: 1_000,
    timeoutMs: 30_000,
    sandboxSlowMs: 0,
    pacingTolerance: 0.15,
    verification: { reportingDelayHours: 0, tolerancePercent: 1 },
    logger: createLogger('silent'),
    real: new Date(`${addDays(START, DAYS)}T06:00:00Z`),
  };
  const adapter = ADAPTER_IMPLEMENTATIONS.get('sandbox-ctv')!;
  const started = performance.now();
  const first = await pollDelivery(db, adapter, options);
  const seconds = (performance.now() - started) / 1000;
  const again = await pollDelivery(db, adapter, options);
  const [{ days }] = (await db.raw('select count(*)::int as days from delivery_days')).rows;
  const [{ revisions }] = (await db.raw('select count(*)::int as revisions from delivery_revisions')).rows;
  const once = days === LINES * DAYS && revisions === days && again.changedDays === 0;
  console.log(`\nDelivery: ${LINES} lines × ${DAYS} days through the poller (batches of ${options.batchSize})`);
  console.log(
    `ingest ${seconds.toFixed(1)} s (target < 60 s): ${seconds < 60 ? 'met' : 'NOT met'}; ${first.changedDays} line-days, ${days} stored, ${revisions} revisions; a second poll changed ${again.changedDays}: ${once ? 'stored once' : 'DUPLICATES'}`,
  );
  figures.push({
    name: `delivery ingest, ${LINES} lines × ${DAYS} days`,
    value: seconds,
    unit: 's',
    target: '< 60 s',
    met: seconds < 60 && once,
  });

  // One 50-line, 90-day campaign, delivered through its last day.
  const [campaignId] = await seedRunning(db, org, 'Pacing ', 1, 50, 90);
  await pollDelivery(db, adapter, { ...options, restatementDays: 90, real: new Date(`${addDays(START, 91)}T06:00:00Z`) });
  await db.raw('analyze');
  const path = `/api/v1/campaigns/${campaignId}/delivery?from=${START}&to=${addDays(START, 89)}`;
  await latencies(service, path); // warm up
  const read = await latencies(service, path);
  const baseline = await latencies(service, '/api/v1/auth/context');
  const p95 = pct(read, 95);
  console.log(
    `GET delivery (50 lines, 90 days) p50 ${pct(read, 50).toFixed(1)} ms p95 ${p95.toFixed(1)} ms (target < 50 ms): ${p95 < 50 ? 'met' : 'NOT met'}; auth context p95 ${pct(baseline, 95).toFixed(1)} ms`,
  );
  figures.push({
    name: 'GET /api/v1/campaigns/{id}/delivery p95, 50 lines × 90 days',
    value: p95,
    unit: 'ms',
    baseline: pct(baseline, 95),
    target: '< 50 ms',
    met: p95 < 50,
  });
}
