import { createTestEnv, json, type TestApi, type TestEnv } from '../support/api';
import { post } from '../support/bookings';
import { runMaintenanceJob } from '../support/maintenance';
import { recordEvent } from '../../shared/events/record';

let env: TestEnv;
let api: TestApi;
beforeAll(async () => {
  env = await createTestEnv();
  api = await env.api();
  // Housekeeping only: deliveries stay as they are recorded.
  await env.workers({ WORKER_QUEUES: 'housekeeping' });
});
afterAll(() => env.close());

test('housekeeping prunes events past 30 days with their deliveries, but never one still being delivered', async () => {
  const token = await env.issuer.token({ org: 'org-r', user: 'owner' });
  const res = await post(api, token, '/api/v1/webhooks/subscriptions', {
    url: 'https://hooks.example.com/r',
    eventTypes: ['funding.credited'],
  });
  expect(res.status).toBe(201);
  await json(res);
  const record = (subjectId: string) =>
    recordEvent(env.db, { workspaceId: 'org-r', type: 'funding.credited', subjectId, subjectVersion: 1, body: {} });
  const [old, oldPending, recent] = [await record('f-old'), await record('f-old-pending'), await record('f-recent')];
  const longAgo = new Date(Date.now() - 31 * 24 * 3600 * 1000);
  await env.db('webhook_events').whereIn('id', [old, oldPending]).update({ occurred_at: longAgo });
  await env.db('webhook_deliveries').whereIn('event_id', [old, recent]).update({ status: 'delivered' });

  // A scheduled run may have pruned it first; either way, what is left is the same.
  expect(await runMaintenanceJob(env, 'prune-webhook-record')).toEqual({ pruned: expect.any(Number) });
  expect((await env.db('webhook_events').orderBy('seq').pluck('id')).sort()).toEqual([oldPending, recent].sort());
  expect(await env.db('webhook_deliveries').where({ event_id: old })).toHaveLength(0);
});
