import { Webhook } from 'standardwebhooks';
import { createTestEnv, json, type TestApi, type TestEnv } from '../support/api';
import { launchPlan, post, waitForBooking } from '../support/bookings';
import { until } from '../support/wait';
import { WebhookReceiver } from '../support/webhook-receiver';
import { recordEvent } from '../../shared/events/record';
import type { EventType } from '../../shared/events/catalogue';
import { sendDelivery } from '../../shared/webhooks/send';
import { sealStoredSecrets } from '../../shared/webhooks/subscription-store';
import { randomBytes } from 'node:crypto';
import { DEVELOPMENT_SECRETS_KEY, secretBoxFor } from '../../shared/crypto/secret-box';

const PER_SUBSCRIPTION = 8;
let env: TestEnv;
let api: TestApi;
const receivers: WebhookReceiver[] = [];
beforeAll(async () => {
  env = await createTestEnv();
  api = await env.api();
  await env.workers({
    WEBHOOK_BACKOFF_MS: '50,100,150',
    WEBHOOK_SWEEP_INTERVAL_MS: '200',
    WEBHOOK_TIMEOUT_MS: '1000',
    WEBHOOK_SUBSCRIPTION_CONCURRENCY: String(PER_SUBSCRIPTION),
  });
});
afterAll(async () => {
  await Promise.all(receivers.map((r) => r.close()));
  await env.close();
});

const BASE = '/api/v1/webhooks/subscriptions';
const receiver = async () => {
  const r = await WebhookReceiver.start();
  receivers.push(r);
  return r;
};

/** A workspace of its own (provisioned by its first request) and a subscription to `url`. */
async function subscribe(org: string, url: string, eventTypes: EventType[]) {
  const token = await env.issuer.token({ org, user: `${org}-owner` });
  const res = await post(api, token, BASE, { url, eventTypes });
  expect(res.status).toBe(201);
  const { subscription, secret } = await json<{ subscription: { id: string }; secret: string }>(res);
  return { token, id: subscription.id, secret };
}

const lineEvent = (org: string, subjectId: string, version: number) =>
  recordEvent(env.db, {
    workspaceId: org,
    type: 'booking.line.status_changed',
    subjectId,
    subjectVersion: version,
    body: { lineId: subjectId, from: 'confirmed', to: 'paused' },
  });

const deliveries = async (token: string, id: string) =>
  (
    await json<{
      deliveries: Array<{
        status: string;
        attemptCount: number;
        nextAttemptAt: string | null;
        id: string;
        attempts: Array<{ statusCode: number | null; latencyMs: number }>;
      }>;
    }>(await api.fetch(`${BASE}/${id}/deliveries`, { token }))
  ).deliveries;

describe('delivery to a real receiver', () => {
  test('a confirmed line is delivered, signed so that a Standard Webhooks verifier accepts it, and refused with one byte changed', async () => {
    const r = await receiver();
    const { token, secret } = await subscribe('org-a', r.url, ['booking.line.status_changed', 'booking.status_changed']);
    const launched = await launchPlan(env, api, [{ channel: 'ctv', adapterKey: 'sandbox-ctv', budgetMinor: 10_000 }], 'org-a');
    // Launched in the subscriber's workspace, the line not yet confirmed: its confirmation is a later move, told on its own.
    expect(launched.booking).toMatchObject({ advertiserId: 'org-a', lines: [{ status: 'queued' }] });
    await waitForBooking(api, token, launched.booking.id, (b) => b.lines.every((l) => l.status === 'confirmed'));
    const lineId = launched.booking.lines[0]!.id;
    await until('the confirmation is received', async () =>
      r.events().some((e) => e.type === 'booking.line.status_changed' && e.data.to === 'confirmed'),
    );

    const confirmed = r.received.find((x) => {
      const e = JSON.parse(x.body) as { type: string; data: { to: string } };
      return e.type === 'booking.line.status_changed' && e.data.to === 'confirmed';
    })!;
    const verified = new Webhook(secret).verify(confirmed.body, confirmed.headers) as {
      id: string;
      subject: { id: string; version: number };
    };
    expect(verified.subject.id).toBe(lineId);
    expect(confirmed.headers['webhook-id']).toBe(verified.id);
    const tampered = confirmed.body.replace('"confirmed"', '"confirmee"');
    expect(tampered).not.toBe(confirmed.body);
    expect(() => new Webhook(secret).verify(tampered, confirmed.headers)).toThrow();
    expect(() => new Webhook(secret).verify(confirmed.body, { ...confirmed.headers, 'webhook-id': `${verified.id}x` })).toThrow();

    // Each status move the line made is one event (no more, no fewer), in its transaction.
    const moves = await env
      .db('booking_events')
      .where({ line_id: lineId })
      .whereRaw(`detail->>'from' is distinct from detail->>'to'`)
      .whereRaw(`detail->>'to' is not null`);
    const events = await env.db('webhook_events').where({ subject_id: lineId }).orderBy('seq');
    expect(events.map((e) => e.body.to)).toEqual(moves.map((m) => m.detail.to));
    expect(events.map((e) => e.subject_version)).toEqual([...events.map((e) => e.subject_version)].sort((a, b) => a - b));
    // Ids and states only.
    expect(Object.keys(verified)).toEqual(['id', 'type', 'timestamp', 'workspaceId', 'subject', 'data']);
    await until('the booking status change is received', async () => r.events().some((e) => e.type === 'booking.status_changed'));
  });

  test('after a rotation, deliveries carry a signature by each secret: a receiver with either verifies them', async () => {
    const r = await receiver();
    const { token, id, secret: old } = await subscribe('org-rotate', r.url, ['funding.credited']);
    const rotated = await json<{ secret: string }>(await post(api, token, `${BASE}/${id}/rotate-secret`));
    await recordEvent(env.db, { workspaceId: 'org-rotate', type: 'funding.credited', subjectId: 'funding-r', subjectVersion: 1, body: {} });
    await until('received', async () => r.received.length === 1);
    const got = r.received[0]!;
    expect(got.headers['webhook-signature']!.split(' ')).toHaveLength(2);
    expect(() => new Webhook(old).verify(got.body, got.headers)).not.toThrow();
    expect(() => new Webhook(rotated.secret).verify(got.body, got.headers)).not.toThrow();
    // Once the overlap is over, only the new secret signs.
    await env
      .db('webhook_subscriptions')
      .where({ id })
      .update({ previous_secret_expires_at: new Date(Date.now() - 1000) });
    await recordEvent(env.db, {
      workspaceId: 'org-rotate',
      type: 'funding.credited',
      subjectId: 'funding-r2',
      subjectVersion: 1,
      body: {},
    });
    await until('received again', async () => r.received.length === 2);
    expect(() => new Webhook(old).verify(r.received[1]!.body, r.received[1]!.headers)).toThrow();
    expect(() => new Webhook(rotated.secret).verify(r.received[1]!.body, r.received[1]!.headers)).not.toThrow();
  });

  test('a subscription whose secret was stored in clear is sealed at start, and its deliveries verify with the secret its receiver holds', async () => {
    const r = await receiver();
    const { id } = await subscribe('org-legacy', r.url, ['funding.credited']);
    // As a subscription made before secrets were sealed was stored.
    const clear = 'whsec_bGVnYWN5LWNsZWFyLXNlY3JldC1zdG9yZWQtYmVmb3JlLXNlYWxpbmc=';
    await env.db('webhook_subscriptions').where({ id }).update({ secret: clear });
    const box = secretBoxFor(undefined);
    expect(await sealStoredSecrets(env.db, box)).toBe(1);
    const row = await env.db('webhook_subscriptions').where({ id }).first();
    expect(row.secret).not.toContain('bGVnYWN5');
    expect(box.open(row.secret)).toBe(clear);
    // Nothing left to seal: a second start changes nothing.
    expect(await sealStoredSecrets(env.db, box)).toBe(0);
    // A new SECRETS_KEY, the development one named as the key it replaced: sealed again under the new one.
    const newKey = randomBytes(32).toString('base64');
    expect(await sealStoredSecrets(env.db, secretBoxFor(newKey, [DEVELOPMENT_SECRETS_KEY]))).toBeGreaterThanOrEqual(1);
    const resealed = await env.db('webhook_subscriptions').where({ id }).first();
    expect(secretBoxFor(newKey).open(resealed.secret)).toBe(clear);
    // Back under the key this test's workers use.
    expect(await sealStoredSecrets(env.db, secretBoxFor(undefined, [newKey]))).toBeGreaterThanOrEqual(1);
    await recordEvent(env.db, { workspaceId: 'org-legacy', type: 'funding.credited', subjectId: 'funding-l', subjectVersion: 1, body: {} });
    await until('received', async () => r.received.length === 1);
    expect(() => new Webhook(clear).verify(r.received[0]!.body, r.received[0]!.headers)).not.toThrow();
  });

  test('a receiver answering 500 three times gets the event on the fourth try, with the same webhook-id', async () => {
    const r = await receiver();
    r.answer = (_x, n) => (n <= 3 ? 500 : 204);
    const { token, id } = await subscribe('org-retry', r.url, ['booking.line.status_changed']);
    await lineEvent('org-retry', 'line-retry-1', 1);
    await until('four tries', async () => r.received.length >= 4);
    await until('recorded as delivered', async () => (await deliveries(token, id))[0]?.status === 'delivered');
    expect(new Set(r.received.map((x) => x.headers['webhook-id'])).size).toBe(1);
    const [d] = await deliveries(token, id);
    expect(d!.attempts.map((a) => a.statusCode)).toEqual([500, 500, 500, 204]);
    expect(d!.attemptCount).toBe(4);
    expect(d!.nextAttemptAt).toBeNull();
  });

  test('a receiver down for the whole back-off leaves the subscription failing and the event on record; redelivery sends it', async () => {
    const r = await receiver();
    r.answer = () => 503;
    const { token, id } = await subscribe('org-down', r.url, ['booking.line.status_changed']);
    const eventId = await lineEvent('org-down', 'line-down-1', 7);
    await until('failed', async () => (await deliveries(token, id))[0]?.status === 'failed');
    expect(r.received).toHaveLength(4); // the first try and three retries
    const sub = await json<{ subscription: { status: string; failingSince: string } }>(await api.fetch(`${BASE}/${id}`, { token }));
    expect(sub.subscription.status).toBe('failing');
    expect(await env.db('webhook_events').where({ id: eventId }).first('subject_version')).toEqual({ subject_version: 7 });

    r.answer = () => 200;
    const [failed] = await deliveries(token, id);
    const again = await post(api, token, `${BASE}/${id}/deliveries/${failed!.id}/redeliver`);
    expect(again.status).toBe(202);
    await until('delivered again', async () => (await deliveries(token, id))[0]?.status === 'delivered');
    expect(r.received.at(-1)!.headers['webhook-id']).toBe(eventId);
    const healed = await json<{ subscription: { status: string } }>(await api.fetch(`${BASE}/${id}`, { token }));
    expect(healed.subscription.status).toBe('active');
    // A pending delivery cannot be redelivered; another workspace cannot see it at all.
    const other = await env.issuer.token({ org: 'org-a', user: 'org-a-owner' });
    expect((await post(api, other, `${BASE}/${id}/deliveries/${failed!.id}/redeliver`)).status).toBe(404);
  });

  test('1,000 changes over 50 lines arrive in version order for each line, none missing', async () => {
    const r = await receiver();
    await subscribe('org-order', r.url, ['booking.line.status_changed']);
    const lines = Array.from({ length: 50 }, (_, i) => `line-order-${i}`);
    await Promise.all(
      lines.map(async (line) => {
        for (let v = 1; v <= 20; v++) await lineEvent('org-order', line, v);
      }),
    );
    await until('every version of every line', async () => new Set(r.received.map((x) => x.headers['webhook-id'])).size === 1000, 110_000);
    for (const line of lines) {
      const seen = r
        .events()
        .filter((e) => e.subject.id === line)
        .map((e) => e.subject.version);
      expect(seen).toEqual([...seen].sort((a, b) => a - b));
      expect(new Set(seen).size).toBe(20);
    }
  }, 120_000);

  test('a receiver that never answers holds no more than its concurrency; another subscription gets everything meanwhile', async () => {
    const dead = await receiver();
    dead.answer = () => null;
    const live = await receiver();
    await subscribe('org-slow', dead.url, ['campaign.paused']);
    const token = await env.issuer.token({ org: 'org-slow', user: 'org-slow-owner' });
    expect((await post(api, token, BASE, { url: live.url, eventTypes: ['campaign.paused'] })).status).toBe(201);
    for (let i = 0; i < 20; i++) {
      await recordEvent(env.db, {
        workspaceId: 'org-slow',
        type: 'campaign.paused',
        subjectId: `campaign-${i}`,
        subjectVersion: 1,
        body: {},
      });
    }
    await until('the live receiver has all twenty', async () => live.received.length >= 20);
    expect(dead.maxOpen).toBeLessThanOrEqual(PER_SUBSCRIPTION);
    expect(dead.maxOpen).toBeGreaterThan(0);
  });

  test('a name that resolves to a refused address is not sent to, checked when sending; the attempt says why', async () => {
    const r = await receiver();
    const claimed = {
      id: '00000000-0000-4000-8000-000000000001',
      subscriptionId: '00000000-0000-4000-8000-000000000002',
      attempts: 1,
      // Saved when loopback was allowed (or a public name that now resolves to loopback).
      url: r.url.replace('127.0.0.1', 'localhost'),
      secrets: ['whsec_dGVzdHNlY3JldHRlc3RzZWNyZXR0ZXN0c2VjcmV0'],
      event: {
        id: '00000000-0000-4000-8000-000000000003',
        type: 'funding.credited',
        workspaceId: 'org-ssrf',
        subjectType: 'funding_request',
        subjectId: 'funding-1',
        subjectVersion: 1,
        body: {},
        occurredAt: new Date(),
      },
    };
    const refused = await sendDelivery(claimed, { allowLoopback: false }, 1000);
    expect(refused).toMatchObject({ statusCode: null, error: 'refused: the address is loopback' });
    expect(r.received).toHaveLength(0);
    // Where loopback is allowed the same delivery reaches the receiver: the refusal was the address check.
    expect(await sendDelivery({ ...claimed, url: r.url }, { allowLoopback: true }, 1000)).toMatchObject({ statusCode: 200, error: null });
    expect(r.received).toHaveLength(1);
  });
});
