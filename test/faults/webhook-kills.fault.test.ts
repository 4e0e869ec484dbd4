import { createTestEnv, json, type TestApi, type TestEnv } from '../support/api';
import { post } from '../support/bookings';
import { TEST_REDIS_URL } from '../support/env';
import { cleanEnv, startScript, type Started } from '../support/processes';
import { until } from '../support/wait';
import { WebhookReceiver } from '../support/webhook-receiver';
import { recordEvent } from '../../shared/events/record';
import { figure } from './support/input-report';

/**
 * A worker process SIGKILLed while a webhook is on the wire: the delivery must be sent again,
 * with the same webhook-id, by the worker that replaces it, and no event may be lost.
 */
let env: TestEnv;
let api: TestApi;
let receiver: WebhookReceiver;
const workers: Started[] = [];
beforeAll(async () => {
  env = await createTestEnv();
  api = await env.api();
  receiver = await WebhookReceiver.start();
});
afterAll(async () => {
  await Promise.all(workers.map((w) => w.stop('SIGKILL').catch(() => undefined)));
  await receiver.close();
  await env.close();
});

const startWorker = () => {
  const w = startScript(
    'bin/worker.ts',
    cleanEnv({
      DATABASE_URL: env.database.url,
      REDIS_URL: TEST_REDIS_URL,
      REDIS_PREFIX: env.prefix,
      DATA_DIR: env.dataDir,
      WORKER_QUEUES: 'webhooks',
      WORKER_LOCK_DURATION_MS: '2000',
      WORKER_STALLED_INTERVAL_MS: '1000',
      OUTBOX_RELAY_INTERVAL_MS: '200',
      WEBHOOK_TIMEOUT_MS: '2000',
      WEBHOOK_SWEEP_INTERVAL_MS: '300',
      WEBHOOK_BACKOFF_MS: '200,400,800',
    }),
  );
  workers.push(w);
  return w;
};

test('a worker killed mid-delivery: the delivery is sent again with the same webhook-id, and no event is lost', async () => {
  const token = await env.issuer.token({ org: 'org-kill', user: 'owner' });
  const created = await post(api, token, '/api/v1/webhooks/subscriptions', {
    url: receiver.url,
    eventTypes: ['booking.line.status_changed'],
  });
  expect(created.status).toBe(201);
  const { subscription } = await json<{ subscription: { id: string } }>(created);

  // The receiver holds the 5th request open: the worker sending it is killed while it waits.
  receiver.answer = (_r, n) => (n === 5 ? null : 200);
  const first = startWorker();
  const ids: string[] = [];
  for (let i = 0; i < 30; i++) {
    const id = await recordEvent(env.db, {
      workspaceId: 'org-kill',
      type: 'booking.line.status_changed',
      subjectId: `line-${i % 3}`,
      subjectVersion: Math.floor(i / 3) + 1,
      body: { from: 'confirmed', to: 'paused' },
    });
    ids.push(id!);
  }
  await until('the fifth delivery is on the wire', async () => receiver.open === 1, 60_000);
  const held = receiver.received[4]!.headers['webhook-id']!;
  first.child.kill('SIGKILL');
  await first.stop();
  receiver.answer = () => 200;
  startWorker();

  await until(
    'every event delivered',
    async () =>
      Number(
        (await env.db('webhook_deliveries').where({ subscription_id: subscription.id, status: 'delivered' }).count('* as n'))[0]!.n,
      ) === 30,
    60_000,
  );
  const received = receiver.received.map((r) => r.headers['webhook-id']);
  expect(received.filter((id) => id === held).length).toBeGreaterThanOrEqual(2);
  expect(new Set(received)).toEqual(new Set(ids));
  // Per line, the versions never went backwards, the resend included.
  for (const line of ['line-0', 'line-1', 'line-2']) {
    const versions = receiver
      .events()
      .filter((e) => e.subject.id === line)
      .map((e) => e.subject.version);
    const firstSeen = versions.filter((v, i) => versions.indexOf(v) === i);
    expect(firstSeen).toEqual([...firstSeen].sort((a, b) => a - b));
  }
  figure(`webhook kill: ${received.length} requests for 30 events; the held one sent ${received.filter((id) => id === held).length} times`);
});
