import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { createDb, type Knex } from '../../shared/db/knex';
import { remoteApi } from '../support/api';
import { launchPlan, SEVEN_CHANNELS } from '../support/bookings';
import { TEST_REDIS_URL } from '../support/env';
import { TestIssuer } from '../support/issuer';
import type { Started } from '../support/processes';
import { until } from '../support/wait';
import { runHousekeepingNow } from './support/fleet';
import { figure } from './support/input-report';
import { pixelLoad } from './support/pixel-load';
import { deleteKeysUnder } from '../support/redis-keys';
import {
  CAMPAIGN_TRAFFIC,
  dedicatedPostgres,
  startService,
  steadyLoad,
  type Dedicated,
  expectOutageHandled,
  judge,
  outageFigure,
  takeAway,
} from './support/outages';

/**
 * The service (API and workers, `bin/start.ts`) on a PostgreSQL of its own, which the test
 * stops under load and starts again: 503s with retry-after while it is away, never a 500,
 * readiness 503, answers again within 5 s of its return, and nothing committed is lost.
 */
const OUTAGE_MS = 6_000;

let dataDir: string;
let postgres: Dedicated;
let issuer: TestIssuer;
let service: Started | undefined;
let db: Knex | undefined;
const prefix = `fdt:pgout:${randomBytes(4).toString('hex')}`;

beforeAll(async () => {
  dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'flightdeck-pg-outage-'));
  // The cluster may run as the unprivileged postgres user, which must reach its folder.
  fs.chmodSync(dataDir, 0o755);
  postgres = await dedicatedPostgres(dataDir);
  issuer = await TestIssuer.start();
}, 120_000);

afterAll(async () => {
  await service?.stop();
  await db?.destroy();
  await postgres.stop();
  await issuer.close();
  await deleteKeysUnder(prefix);
  fs.rmSync(dataDir, { recursive: true, force: true });
}, 60_000);

test('a PostgreSQL outage under load gives 503s with retry-after, recovers within 5 s and loses nothing', async () => {
  let url: string;
  ({ service, url } = await startService(
    { databaseUrl: postgres.url, redisUrl: TEST_REDIS_URL, prefix, dataDir, issuer },
    { SANDBOX_SLOW_MS: '1500' },
  ));
  const api = remoteApi(url);
  db = createDb(postgres.url);
  const token = await issuer.token({ org: 'org-pg-outage', user: 'buyer' });
  const load = steadyLoad(url, token, CAMPAIGN_TRAFFIC, 4);
  const { workspace } = (await (await api.fetch('/api/v1/auth/context', { token })).json()) as { workspace: { pixelKey: string } };
  const pixel = pixelLoad(url, workspace.pixelKey);
  // Bookings in flight when the database goes: slow supplier calls on every channel.
  const launched = await Promise.all(
    [0, 1, 2].map(() =>
      launchPlan(
        { issuer },
        api,
        SEVEN_CHANNELS.map((channel, i) => ({ channel, adapterKey: `sandbox-${channel}`, budgetMinor: 10_093 + i * 100 })),
        'org-pg-outage',
      ),
    ),
  );
  const lineIds = launched.flatMap((l) => l.booking.lines.map((x) => x.id));
  // Every supplier has the booking and is still "thinking" (1.5 s) when the database goes.
  await until(
    'every supplier to receive its booking',
    async () => (await db!('sandbox_ledger').whereIn('line_id', lineIds)).length === lineIds.length,
    30_000,
  );

  const run = await takeAway(postgres, { url, api, token }, OUTAGE_MS);
  await new Promise((r) => setTimeout(r, 2000));
  await load.stop();
  await pixel.stop();

  // Work the outage interrupted is settled by the workers, with their housekeeping's help.
  const redis = new Redis(TEST_REDIS_URL, { maxRetriesPerRequest: null });
  await runHousekeepingNow(redis, prefix).finally(() => redis.disconnect());
  await until(
    'every interrupted line to settle',
    async () => (await db!('booking_lines').whereIn('id', lineIds).whereIn('status', ['queued', 'in-progress'])).length === 0,
    60_000,
  );
  const lines = await db('booking_lines').whereIn('id', lineIds).select('id', 'status');
  const ledger = await db('sandbox_ledger').whereIn('line_id', lineIds).select('line_id');
  const doubled = lineIds.filter((id) => ledger.filter((r) => r.line_id === id).length > 1);

  // Pageviews are accepted into Redis while PostgreSQL is away, and every one is stored once it is back.
  await until(
    'every acknowledged pageview stored',
    async () => (await db!('pixel_events').where({ kind: 'outage' })).length >= pixel.acceptedAt.length,
    60_000,
  );
  const pageviewsStored = (await db('pixel_events').where({ kind: 'outage' })).length;
  const pageviewsDuring = pixel.acceptedAt.filter((at) => at > run.down + 500 && at < run.restoring).length;

  const verdict = judge(load.answers, run);
  const stored = Number((await db('campaigns').count({ n: '*' }))[0]!.n);
  figure(
    `PostgreSQL outage (${OUTAGE_MS / 1000} s under load): ${outageFigure(load.answers, run, verdict, 'PostgreSQL')}, ` +
      `${stored - 3} stored besides the 3 booked; ` +
      `${lines.filter((l) => l.status === 'reconciliation-required').length} of ${lines.length} lines in flight at the stop to reconciliation, ${doubled.length} sent twice; ` +
      `${pixel.acceptedAt.length} pageviews acknowledged (${pageviewsDuring} during the outage), ${pageviewsStored} stored, ${pixel.other.length} not acknowledged`,
  );
  expectOutageHandled(run, verdict, service!.output());
  // Every acknowledged campaign is stored (the three booked ones were created by launchPlan).
  expect(stored - 3).toBe(verdict.created);
  // Every answer the suppliers gave during the outage waited it out: nothing left to a person.
  expect(lines.filter((l) => l.status !== 'confirmed')).toEqual([]);
  expect(doubled).toEqual([]);
  expect(pageviewsDuring).toBeGreaterThan(0);
  expect(pixel.other).toEqual([]);
  expect(pageviewsStored).toBe(pixel.acceptedAt.length);
}, 300_000);
