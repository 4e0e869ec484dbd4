import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { createTestEnv, type TestEnv } from '../support/api';
import { TEST_REDIS_URL } from '../support/env';
import { runMaintenanceJob } from '../support/maintenance';
import { MAINTENANCE_QUEUE, queuePrefix, requiredQueues } from '../../shared/queues/names';
import { freshHeartbeats } from '../../shared/heartbeat';

let env: TestEnv;
beforeAll(async () => {
  env = await createTestEnv();
});
afterAll(() => env.close());

const record = (key: string, createdAt: Date) => ({
  advertiser_id: 'org-a',
  caller_id: 'user-1',
  route: 'POST /api/v1/brand-lift-studies/:studyId/draft',
  idempotency_key: key,
  request_digest: 'a'.repeat(64),
  created_at: createdAt,
});

describe('maintenance worker', () => {
  test('the scheduled purge removes idempotency records older than 24 hours and keeps younger ones', async () => {
    const day = 24 * 60 * 60 * 1000;
    await env
      .db('idempotency_records')
      .insert([
        record('00000000-0000-4000-8000-000000000001', new Date(Date.now() - day - 60_000)),
        record('00000000-0000-4000-8000-000000000002', new Date(Date.now() - day + 60_000)),
      ]);
    const workers = await env.workers();
    try {
      await runMaintenanceJob(env, 'purge-idempotency-records');
      const left = await env.db('idempotency_records').pluck('idempotency_key');
      expect(left).toEqual(['00000000-0000-4000-8000-000000000002']);
      // The scheduler registered the hourly purge too.
      const connection = new Redis(TEST_REDIS_URL, { maxRetriesPerRequest: null });
      const queue = new Queue(MAINTENANCE_QUEUE, { connection, prefix: queuePrefix(env.prefix, MAINTENANCE_QUEUE) });
      expect((await queue.getJobSchedulers()).map((s) => s.key)).toContain('purge-idempotency-records');
      await queue.close();
      connection.disconnect();
    } finally {
      await workers.close();
    }
  });

  test('the scheduled prune removes outbox rows relayed over a week ago, and keeps pending and recent ones', async () => {
    const week = 7 * 24 * 60 * 60 * 1000;
    await env.db('outbox').insert([
      { queue: 'q', job_name: 'j', job_id: 'old-relayed', payload: '{}', relayed_at: new Date(Date.now() - week - 60_000) },
      { queue: 'q', job_name: 'j', job_id: 'recent-relayed', payload: '{}', relayed_at: new Date(Date.now() - 60_000) },
      { queue: 'q', job_name: 'j', job_id: 'old-pending', payload: '{}', created_at: new Date(Date.now() - week * 2) },
    ]);
    const workers = await env.workers({ OUTBOX_RELAY_INTERVAL_MS: '3600000' });
    try {
      await runMaintenanceJob(env, 'prune-relayed-outbox');
      expect((await env.db('outbox').whereIn('job_id', ['old-relayed', 'recent-relayed', 'old-pending']).pluck('job_id')).sort()).toEqual([
        'old-pending',
        'recent-relayed',
      ]);
    } finally {
      await workers.close();
    }
  });

  test('the scheduled purge removes expired authorization server artifacts, and keeps live and unexpiring ones', async () => {
    const artifact = (id: string, expiresAt: Date | null) => ({
      model: 'AuthorizationCode',
      id,
      payload: JSON.stringify({ kind: 'AuthorizationCode' }),
      expires_at: expiresAt,
    });
    await env
      .db('oauth_artifacts')
      .insert([
        artifact('expired-code', new Date(Date.now() - 60_000)),
        artifact('live-code', new Date(Date.now() + 60_000)),
        artifact('no-expiry', null),
      ]);
    const workers = await env.workers();
    try {
      expect(await runMaintenanceJob(env, 'purge-oauth-artifacts')).toEqual({ purged: 1 });
      expect((await env.db('oauth_artifacts').pluck('id')).sort()).toEqual(['live-code', 'no-expiry']);
    } finally {
      await workers.close();
    }
  });

  test('workers announce heartbeats for their queues and withdraw them on shutdown', async () => {
    const workers = await env.workers();
    await new Promise((r) => setTimeout(r, 100));
    const beats = await freshHeartbeats(env.redis, env.prefix, 3000);
    expect(beats.find((b) => b.role === 'worker')?.queues).toEqual(requiredQueues());
    expect(beats.some((b) => b.role === 'scheduler')).toBe(true);
    await workers.close();
    expect(await freshHeartbeats(env.redis, env.prefix, 3000)).toEqual([]);
  });

  test('WORKER_QUEUES naming an unknown queue stops the worker with a clear message', async () => {
    await expect(env.workers({ WORKER_QUEUES: 'supplier.nowhere' })).rejects.toThrow(/unknown queue\(s\): supplier.nowhere/);
  });
});
