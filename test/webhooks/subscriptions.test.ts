import { createTestEnv, expectProblem, json, type TestApi, type TestEnv } from '../support/api';
import { secretBoxFor } from '../../shared/crypto/secret-box';
import { post } from '../support/bookings';

let env: TestEnv;
let api: TestApi;
beforeAll(async () => {
  env = await createTestEnv();
  api = await env.api();
});
afterAll(() => env.close());

const BASE = '/api/v1/webhooks/subscriptions';
const person = (org = 'org-a') => env.issuer.token({ org, user: `${org}-owner` });
const subscriptionRows = async () => env.db('webhook_subscriptions').orderBy('id').select('*');

describe('the event catalogue', () => {
  test('lists every event type with its subject, the reserved pacing event included', async () => {
    const res = await api.fetch('/api/v1/webhooks/event-types', { token: await person() });
    expect(res.status).toBe(200);
    const { eventTypes } = await json<{ eventTypes: Array<{ type: string; subject: string }> }>(res);
    expect(eventTypes.map((e) => e.type)).toEqual(
      expect.arrayContaining([
        'booking.line.status_changed',
        'booking.status_changed',
        'campaign.paused',
        'campaign.resumed',
        'campaign.stopped',
        'amendment.completed',
        'delivery.pacing_changed',
        'agent.approval.pending',
        'agent.approval.decided',
        'agent.step.unknown',
        'funding.credited',
        'creative.review.completed',
      ]),
    );
  });
});

describe('subscriptions', () => {
  test('a person subscribes an https URL; the secret is shown once and never read back', async () => {
    const token = await person();
    const res = await post(api, token, BASE, { url: 'https://hooks.example.com/flightdeck', eventTypes: ['booking.line.status_changed'] });
    expect(res.status).toBe(201);
    const { subscription, secret } = await json<{ subscription: { id: string; status: string; version: number }; secret: string }>(res);
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(subscription.status).toBe('active');
    const read = await api.fetch(`${BASE}/${subscription.id}`, { token });
    expect(read.status).toBe(200);
    expect(JSON.stringify(await json(read))).not.toContain(secret.slice(6));
    const listed = await json<{ subscriptions: Array<{ id: string }> }>(await api.fetch(BASE, { token }));
    expect(listed.subscriptions.map((s) => s.id)).toContain(subscription.id);
  });

  test('an update changes what it names and the version; a stale expectedVersion is 409 and changes nothing', async () => {
    const token = await person();
    const { subscription } = await json<{ subscription: { id: string; version: number } }>(
      await post(api, token, BASE, { url: 'https://hooks.example.com/a', eventTypes: ['campaign.paused'] }),
    );
    const changed = await post(
      api,
      token,
      `${BASE}/${subscription.id}`,
      { eventTypes: ['campaign.paused', 'campaign.stopped'], enabled: false },
      'PATCH',
    );
    expect(changed.status).toBe(200);
    const after = (await json<{ subscription: { eventTypes: string[]; status: string; version: number } }>(changed)).subscription;
    expect(after).toMatchObject({ eventTypes: ['campaign.paused', 'campaign.stopped'], status: 'disabled', version: 2 });
    const before = await subscriptionRows();
    await expectProblem(
      await post(api, token, `${BASE}/${subscription.id}`, { enabled: true, expectedVersion: 1 }, 'PATCH'),
      409,
      'version_conflict',
    );
    expect(await subscriptionRows()).toEqual(before);
    // A patch that names nothing changes nothing, the version included.
    const same = await post(api, token, `${BASE}/${subscription.id}`, {}, 'PATCH');
    expect((await json<{ subscription: { version: number } }>(same)).subscription.version).toBe(2);
    expect(await subscriptionRows()).toEqual(before);
  });

  test('rotating the secret returns a new one and keeps the previous one signing for the overlap', async () => {
    const token = await person();
    const created = await json<{ subscription: { id: string }; secret: string }>(
      await post(api, token, BASE, { url: 'https://hooks.example.com/r', eventTypes: ['funding.credited'] }),
    );
    const res = await post(api, token, `${BASE}/${created.subscription.id}/rotate-secret`);
    expect(res.status).toBe(200);
    const rotated = await json<{ subscription: { previousSecretExpiresAt: string | null }; secret: string }>(res);
    expect(rotated.secret).not.toBe(created.secret);
    expect(Date.parse(rotated.subscription.previousSecretExpiresAt!)).toBeGreaterThan(Date.now() + 23 * 3600_000);
    // Both are kept sealed: the row alone gives neither away, the deployment's key opens both.
    const row = await env.db('webhook_subscriptions').where({ id: created.subscription.id }).first();
    expect(JSON.stringify(row)).not.toContain(rotated.secret.slice('whsec_'.length));
    expect(JSON.stringify(row)).not.toContain(created.secret.slice('whsec_'.length));
    const box = secretBoxFor(undefined);
    expect([box.open(row.secret), box.open(row.previous_secret)]).toEqual([rotated.secret, created.secret]);
  });

  test('delete removes it; another workspace finds nothing to read, change or delete', async () => {
    const token = await person();
    const { subscription } = await json<{ subscription: { id: string } }>(
      await post(api, token, BASE, { url: 'https://hooks.example.com/d', eventTypes: ['funding.credited'] }),
    );
    const other = await person('org-b');
    await expectProblem(await api.fetch(`${BASE}/${subscription.id}`, { token: other }), 404, 'not_found');
    await expectProblem(await post(api, other, `${BASE}/${subscription.id}`, { enabled: false }, 'PATCH'), 404);
    await expectProblem(await api.fetch(`${BASE}/${subscription.id}`, { token: other, method: 'DELETE' }), 404);
    expect((await json<{ subscriptions: unknown[] }>(await api.fetch(BASE, { token: other }))).subscriptions).toEqual([]);
    const gone = await api.fetch(`${BASE}/${subscription.id}`, { token, method: 'DELETE' });
    expect(gone.status).toBe(200);
    await expectProblem(await api.fetch(`${BASE}/${subscription.id}`, { token }), 404);
  });

  test('delegated agents and narrower products may not manage subscriptions, and nothing is written', async () => {
    const before = await subscriptionRows();
    const agent = await env.issuer.token({ org: 'org-a', user: 'org-a-owner', agent: 'assistant-1' });
    await expectProblem(
      await post(api, agent, BASE, { url: 'https://hooks.example.com/x', eventTypes: ['campaign.paused'] }),
      403,
      'human_required',
    );
    await expectProblem(await api.fetch(BASE, { token: agent }), 403, 'human_required');
    const dooh = await env.issuer.token({ org: 'org-a', user: 'org-a-owner', product: 'flightdeck-dooh' });
    await expectProblem(
      await post(api, dooh, BASE, { url: 'https://hooks.example.com/x', eventTypes: ['campaign.paused'] }),
      403,
      'channel_not_entitled',
    );
    expect(await subscriptionRows()).toEqual(before);
  });

  test.each([
    ['a private address', 'https://10.1.2.3/hook', 'url_refused'],
    ['a link-local address (cloud metadata)', 'https://169.254.169.254/latest', 'url_refused'],
    ['an IPv6 unique-local address', 'https://[fd00::1]/hook', 'url_refused'],
    ['an IPv4-mapped private address', 'https://[::ffff:192.168.1.1]/hook', 'url_refused'],
    ['http to a public host', 'http://hooks.example.com/hook', 'url_refused'],
    ['credentials in the URL', 'https://user:pw@hooks.example.com/hook', 'url_refused'],
    ['another scheme', 'ftp://hooks.example.com/hook', 'url_refused'],
    ['not a URL', 'hooks', 'validation_failed'],
  ])('%s is refused with 400 and nothing is written', async (_what, url, code) => {
    const before = await subscriptionRows();
    await expectProblem(await post(api, await person(), BASE, { url, eventTypes: ['campaign.paused'] }), 400, code);
    expect(await subscriptionRows()).toEqual(before);
  });

  test.each([
    ['an unknown event type', { url: 'https://hooks.example.com/h', eventTypes: ['booking.deleted'] }],
    ['no event type', { url: 'https://hooks.example.com/h', eventTypes: [] }],
    ['an event type twice', { url: 'https://hooks.example.com/h', eventTypes: ['campaign.paused', 'campaign.paused'] }],
    ['an unknown field', { url: 'https://hooks.example.com/h', eventTypes: ['campaign.paused'], secret: 'mine' }],
  ])('%s is a 400 and nothing is written', async (_what, body) => {
    const before = await subscriptionRows();
    await expectProblem(await post(api, await person(), BASE, body), 400, 'validation_failed');
    expect(await subscriptionRows()).toEqual(before);
  });

  test('in production, loopback receivers are refused too', async () => {
    const prodLike = await env.api({ WEBHOOK_ALLOW_LOOPBACK: 'false' });
    await expectProblem(
      await post(prodLike, await person(), BASE, { url: 'http://127.0.0.1:8080/hook', eventTypes: ['campaign.paused'] }),
      400,
      'url_refused',
    );
    await expectProblem(
      await post(prodLike, await person(), BASE, { url: 'https://localhost/hook', eventTypes: ['campaign.paused'] }),
      400,
      'url_refused',
    );
    const dev = await post(api, await person(), BASE, { url: 'http://127.0.0.1:8080/hook', eventTypes: ['campaign.paused'] });
    expect(dev.status).toBe(201);
  });
});
