import fs from 'node:fs';
import path from 'node:path';
import { createTestEnv, json, type TestEnv } from '../support/api';
import { Redis } from 'ioredis';
import { createDb } from '../../shared/db/knex';
import { freshHeartbeats, startHeartbeat } from '../../shared/heartbeat';
import { TEST_REDIS_URL } from '../support/env';
import { until } from '../support/wait';

let env: TestEnv;
beforeAll(async () => {
  env = await createTestEnv({ rateLimits: 'default' });
});
afterAll(() => env.close());

interface Report {
  status: string | number;
  failed?: string[];
  checks: Record<string, { ok: boolean; detail: string }>;
  runtime: Record<string, string>;
  billing: { mode: string };
}

describe('heartbeats after a Redis outage', () => {
  test('a worker announces itself as soon as its Redis connection is back, not at its next tick', async () => {
    const connection = new Redis(TEST_REDIS_URL, { maxRetriesPerRequest: null });
    // A tick every 200 s: only the return of the connection can announce it within the test.
    const beat = startHeartbeat(connection, env.prefix, 'worker', ['maintenance'], 600_000);
    try {
      await until('the first heartbeat', async () => (await freshHeartbeats(env.redis, env.prefix, 600_000)).length === 1, 10_000);
      // Redis came back without it (a restart that lost its data, a failover), and the connection reconnects.
      await env.redis.del(`${env.prefix}:heartbeats`);
      const back = new Promise((r) => connection.once('ready', r));
      connection.disconnect(true);
      await back;
      await until('the heartbeat again', async () => (await freshHeartbeats(env.redis, env.prefix, 600_000)).length === 1, 10_000);
    } finally {
      await beat.stop();
      connection.disconnect();
    }
  });
});

describe('GET /readyz', () => {
  test('with every dependency up and workers running, it is ready and reports runtime and billing mode', async () => {
    const api = await env.api();
    const workers = await env.workers();
    const res = await api.fetch('/readyz');
    const body = await json<Report>(res);
    expect(res.status).toBe(200);
    expect(body.status).toBe('ready');
    expect(Object.keys(body.checks).sort()).toEqual([
      'adapterRegistry',
      'browser',
      'creativeEvidence',
      'credentials',
      'database',
      'redis',
      'workers',
    ]);
    expect(Object.values(body.checks).every((c) => c.ok)).toBe(true);
    expect(body.runtime).toMatchObject({ executionModeDefault: 'sandbox', authMode: 'jwks', database: 'external' });
    expect(body.billing).toEqual({ mode: 'sandbox' });
    expect(res.headers.get('x-ratelimit-limit')).toBe('300');
    await workers.close();
  });

  test('with no worker heartbeat, it is 503 and names the workers check', async () => {
    const api = await env.api({ REDIS_PREFIX: `${env.prefix}:noworkers` });
    const res = await api.fetch('/readyz');
    expect(res.status).toBe(503);
    const body = await json<Report>(res);
    expect(body.failed).toEqual(['workers', 'browser']);
    expect(body.checks.workers!.detail).toMatch(/scheduler/);
    expect(body.checks.browser!.detail).toBe('no live worker for browser jobs');
  });

  test('when Redis is down, it is 503 and names redis, without exposing addresses', async () => {
    const api = await env.api({}, { redisUrl: 'redis://127.0.0.1:9' });
    const res = await api.fetch('/readyz');
    expect(res.status).toBe(503);
    const text = await res.text();
    const body = JSON.parse(text) as Report;
    expect(body.failed).toEqual(expect.arrayContaining(['redis']));
    expect(body.checks.database!.ok).toBe(true);
    expect(text).not.toMatch(/127\.0\.0\.1|ECONNREFUSED/);
  });

  test('when the database is down, it is 503 and names the database', async () => {
    const deadDb = createDb('postgres://postgres@127.0.0.1:9/nothing');
    try {
      const api = await env.api({}, { db: deadDb });
      await env.workers();
      const res = await api.fetch('/readyz');
      expect(res.status).toBe(503);
      const body = await json<Report>(res);
      expect(body.failed).toEqual(expect.arrayContaining(['database']));
      expect(body.checks.redis!.ok).toBe(true);
    } finally {
      await deadDb.destroy();
    }
  });

  test('checking readiness writes nothing: the asset folder is unchanged after repeated calls', async () => {
    const api = await env.api();
    const assetDir = path.join(env.dataDir, 'assets');
    const before = fs.statSync(assetDir);
    for (let i = 0; i < 3; i++) await api.fetch('/readyz');
    const after = fs.statSync(assetDir);
    expect(fs.readdirSync(assetDir)).toEqual([]);
    expect(after.mtimeMs).toBe(before.mtimeMs);
  });

  test('a pending migration fails the database check without naming it, and the name goes to the log', async () => {
    const [last] = await env.db('knex_migrations').orderBy('id', 'desc').limit(1);
    await env.db('knex_migrations').where({ id: last.id }).delete();
    try {
      const api = await env.api();
      await env.workers();
      const res = await api.fetch('/readyz');
      expect(res.status).toBe(503);
      const text = await res.text();
      const body = JSON.parse(text) as Report;
      expect(body.failed).toEqual(['database']);
      expect(body.checks.database!.detail).toBe('1 migration(s) not applied');
      expect(text).not.toContain(last.name);
      expect(body.runtime).toMatchObject({ executionModeDefault: 'sandbox' });
      expect(body.billing).toEqual({ mode: 'sandbox' });
      expect(api.rawLogs.join('')).toContain(last.name);
    } finally {
      await env.db('knex_migrations').insert(last);
    }
  });

  test('in live mode it needs an approved live supplier credential', async () => {
    const api = await env.api({ EXECUTION_MODE_DEFAULT: 'live', BILLING_MODE: 'live' });
    await env.workers();
    const before = await json<Report>(await api.fetch('/readyz'));
    expect(before.failed).toEqual(['credentials']);
    expect(before.billing).toEqual({ mode: 'live' });
    await env
      .db('supplier_credentials')
      .insert({ adapter_key: 'live-ctv', secret_ref: 'vault:suppliers/live-ctv', approved_at: new Date() });
    const after = await api.fetch('/readyz');
    expect(after.status).toBe(200);
  });

  test('when asset storage cannot be written, creative evidence fails', async () => {
    // A regular file where the storage folder should be: nothing can be written under it.
    const blocker = `${env.dataDir}/not-a-folder`;
    fs.writeFileSync(blocker, 'x');
    const api = await env.api({ ASSET_DIR: blocker });
    await env.workers();
    const text = await (await api.fetch('/readyz')).text();
    const body = JSON.parse(text) as Report;
    expect(body.failed).toEqual(['creativeEvidence']);
    expect(text).not.toContain(blocker);
  });
});
