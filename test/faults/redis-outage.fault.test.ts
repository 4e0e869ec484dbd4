import { Redis } from 'ioredis';
import { createTestEnv, remoteApi, type TestEnv } from '../support/api';
import { launchPlan, SEVEN_CHANNELS } from '../support/bookings';
import type { Started } from '../support/processes';
import { until } from '../support/wait';
import { runHousekeepingNow } from './support/fleet';
import { figure } from './support/input-report';
import { pixelLoad } from './support/pixel-load';
import {
  CAMPAIGN_TRAFFIC,
  dedicatedRedis,
  startService,
  steadyLoad,
  type Dedicated,
  expectOutageHandled,
  judge,
  outageFigure,
  takeAway,
} from './support/outages';

/**
 * The service (`bin/start.ts`) on a Redis of its own, which the test SIGKILLs under load and
 * starts again from its append-only file: 503s with retry-after while it is away, never a
 * 500, readiness 503, answers again within 5 s of its return, queued work resumes, and
 * nothing is sent to a supplier twice.
 */
const OUTAGE_MS = 6_000;
const BOOKINGS = 12;

let env: TestEnv;
let redis: Dedicated;
let service: Started | undefined;
beforeAll(async () => {
  env = await createTestEnv();
  redis = await dedicatedRedis(env.dataDir);
}, 60_000);
afterAll(async () => {
  await service?.stop();
  await redis.stop();
  await env.close();
}, 60_000);

test('a Redis outage under load gives 503s with retry-after, recovers within 5 s, resumes queued work and sends nothing twice', async () => {
  let url: string;
  ({ service, url } = await startService(
    { databaseUrl: env.database.url, redisUrl: redis.url, prefix: env.prefix, dataDir: env.dataDir, issuer: env.issuer },
    { SANDBOX_SLOW_MS: '800' },
  ));
  const api = remoteApi(url);
  const token = await env.issuer.token({ org: 'org-redis-outage', user: 'buyer' });
  const load = steadyLoad(url, token, CAMPAIGN_TRAFFIC, 4);
  const { workspace } = (await (await api.fetch('/api/v1/auth/context', { token })).json()) as { workspace: { pixelKey: string } };
  const pixel = pixelLoad(url, workspace.pixelKey);
  // Enough slow supplier work that some is running and more is waiting when Redis goes.
  const launched = await Promise.all(
    Array.from({ length: BOOKINGS }, () =>
      launchPlan(
        env,
        api,
        SEVEN_CHANNELS.map((channel, i) => ({ channel, adapterKey: `sandbox-${channel}`, budgetMinor: 10_093 + i * 100 })),
        'org-redis-outage',
      ),
    ),
  );
  const lineIds = launched.flatMap((l) => l.booking.lines.map((x) => x.id));
  const settledCount = async () =>
    (await env.db('booking_lines').whereIn('id', lineIds).whereNotIn('status', ['queued', 'in-progress'])).length;
  await new Promise((r) => setTimeout(r, 1000));

  let settledAtCrash = 0;
  const run = await takeAway(redis, { url, api, token }, OUTAGE_MS, async () => {
    settledAtCrash = await settledCount();
  });
  await new Promise((r) => setTimeout(r, 2000));
  await load.stop();
  await pixel.stop();

  // Jobs whose worker lost Redis mid-job are re-delivered; what a double failure left open is
  // the housekeeping's to close.
  const settleAll = () =>
    until('every line to settle', async () => (await settledCount()) === lineIds.length, 30_000).catch(() => undefined);
  await settleAll();
  const openBeforeHousekeeping = lineIds.length - (await settledCount());
  if (openBeforeHousekeeping > 0) {
    const connection = new Redis(redis.url, { maxRetriesPerRequest: null });
    await runHousekeepingNow(connection, env.prefix).finally(() => connection.disconnect());
    await settleAll();
  }
  const lines = await env.db('booking_lines').whereIn('id', lineIds).select('id', 'status');
  const ledger = await env.db('sandbox_ledger').whereIn('line_id', lineIds).select('line_id');
  const doubled = lineIds.filter((id) => ledger.filter((r) => r.line_id === id).length > 1);

  // Every pageview acknowledged before the crash (append-only file, fsync always) or after it is stored.
  const pageviews = () => env.db('pixel_events').where({ kind: 'outage' }).count({ n: '*' });
  await until('every acknowledged pageview stored', async () => Number((await pageviews())[0]!.n) >= pixel.acceptedAt.length, 60_000);
  const pageviewsStored = Number((await pageviews())[0]!.n);

  const verdict = judge(load.answers, run);
  const stored = Number((await env.db('campaigns').count({ n: '*' }))[0]!.n) - BOOKINGS;
  figure(
    `Redis outage (SIGKILL, ${OUTAGE_MS / 1000} s under load): ${outageFigure(load.answers, run, verdict, 'Redis')}, ${stored} stored; ` +
      `${settledAtCrash} of ${lineIds.length} lines settled at the crash, ` +
      `${lines.filter((l) => l.status === 'confirmed').length} confirmed and ${lines.filter((l) => l.status === 'reconciliation-required').length} ` +
      `to reconciliation after it (${openBeforeHousekeeping} by housekeeping), ${doubled.length} sent twice; ` +
      `${pixel.acceptedAt.length} pageviews acknowledged, ${pageviewsStored} stored, ${pixel.other.filter((st) => st === 503).length} refused with 503`,
  );
  expectOutageHandled(run, verdict, service!.output());
  expect(stored).toBe(verdict.created);
  // Work was still queued or running at the crash, and all of it finished afterwards.
  expect(settledAtCrash).toBeLessThan(lineIds.length);
  expect(lines.filter((l) => !['confirmed', 'reconciliation-required'].includes(l.status))).toEqual([]);
  expect(doubled).toEqual([]);
  expect(pixel.other.filter((st) => st !== 503)).toEqual([]);
  expect(pixel.other.length).toBeGreaterThan(0);
  expect(pageviewsStored).toBe(pixel.acceptedAt.length);
}, 300_000);
