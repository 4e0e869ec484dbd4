import { createTestEnv, json, type TestApi, type TestEnv } from '../support/api';
import { until } from '../support/wait';
import { pixelStreamKey } from '../../shared/pixel/pixel-stream';

let env: TestEnv;
let api: TestApi;
let pixelKey: string;

beforeAll(async () => {
  env = await createTestEnv();
  api = await env.api();
  // The pixel writer alone: it stores what the route accepted.
  await env.workers({ WORKER_QUEUES: 'pixel' });
  const ctx = await json<{ workspace: { pixelKey: string } }>(
    await api.fetch('/api/v1/auth/context', { token: await env.issuer.token({ org: 'org-pixel' }) }),
  );
  pixelKey = ctx.workspace.pixelKey;
});
beforeEach(async () => {
  await stored();
  await env.db('pixel_events').delete();
});
afterAll(() => env.close());

const track = (body?: unknown, headers: Record<string, string> = {}, key = pixelKey) =>
  api.fetch(`/api/v1/t/${key}`, {
    method: 'POST',
    headers: { ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
/** Accepted pageviews reach PostgreSQL a moment later: wait until none waits in the stream. */
const stored = () => until('accepted pageviews stored', async () => (await env.redis.xlen(pixelStreamKey(env.prefix))) === 0);
const rows = async (...columns: string[]) => {
  await stored();
  return env.db('pixel_events').select(...(columns.length ? columns : ['*']));
};
const count = async () => (await rows('id')).length;

describe('POST /api/v1/t/{pixelKey}', () => {
  test('records an anonymous pageview with its named fields, without authentication', async () => {
    const res = await track({ kind: 'pageview', event: 'checkout', value: 12.5, valueMinor: 1250, promoCode: 'SPRING' });
    expect(res.status).toBe(202);
    expect(await json(res)).toEqual({ accepted: true, replayed: false });
    expect(res.headers.get('access-control-allow-origin')).toBe('*');
    const all = await rows();
    expect(all).toHaveLength(1);
    expect(all[0]).toMatchObject({
      advertiser_id: 'org-pixel',
      kind: 'pageview',
      event: 'checkout',
      value: '12.50',
      value_minor: '1250',
      promo_code: 'SPRING',
    });
  });

  test('an empty body is a plain pageview', async () => {
    expect((await track()).status).toBe(202);
    expect(await count()).toBe(1);
  });

  test('unknown fields are accepted and ignored', async () => {
    expect((await track({ kind: 'pv', email: 'someone@example.com', revenue: 1e6 })).status).toBe(202);
    const [row] = await rows();
    expect(JSON.stringify(row)).not.toMatch(/someone@example.com/);
  });

  test('a beacon posting JSON as text/plain is accepted', async () => {
    const res = await api.fetch(`/api/v1/t/${pixelKey}`, {
      method: 'POST',
      headers: { 'content-type': 'text/plain' },
      body: '{"kind":"beacon"}',
    });
    expect(res.status).toBe(202);
    expect(await rows('kind')).toEqual([{ kind: 'beacon' }]);
  });

  test('an unknown pixel key is 404 and records nothing', async () => {
    const res = await track({ kind: 'pv' }, {}, 'px_unknown');
    expect(res.status).toBe(404);
    expect(await count()).toBe(0);
  });

  test.each([
    ['kind over 64 characters', { kind: 'k'.repeat(65) }],
    ['event over 64 characters', { event: 'e'.repeat(65) }],
    ['promoCode over 64 characters', { promoCode: 'p'.repeat(65) }],
    ['negative value', { value: -0.01 }],
    ['value above 21474836.47', { value: 21474836.48 }],
    ['value as a string', { value: '12' }],
    ['fractional valueMinor', { valueMinor: 1.5 }],
    ['valueMinor above 2147483647', { valueMinor: 2147483648 }],
    ['negative valueMinor', { valueMinor: -1 }],
    ['kind of the wrong type', { kind: 42 }],
  ])('%s is a 400 and records nothing', async (_name, body) => {
    const res = await track(body);
    expect(res.status).toBe(400);
    expect(await json(res)).toMatchObject({ code: 'validation_failed' });
    expect(await count()).toBe(0);
  });

  test('the bounds themselves are accepted', async () => {
    const res = await track({ kind: 'k'.repeat(64), value: 21474836.47, valueMinor: 2147483647 });
    expect(res.status).toBe(202);
  });

  test('a pixel key over 128 characters is a 400', async () => {
    expect((await track({}, {}, 'k'.repeat(129))).status).toBe(400);
  });

  test.each([
    ['7 characters', 'abcdefg'],
    ['201 characters', 'k'.repeat(201)],
  ])('an Idempotency-Key of %s is a 400 and records nothing', async (_n, key) => {
    expect((await track({ kind: 'pv' }, { 'idempotency-key': key })).status).toBe(400);
    expect(await count()).toBe(0);
  });

  test('a replay with the same Idempotency-Key and a changed body keeps the first event and does not error', async () => {
    const key = 'order-1234-view';
    expect(await json(await track({ kind: 'first', valueMinor: 100 }, { 'idempotency-key': key }))).toEqual({
      accepted: true,
      replayed: false,
    });
    const replay = await track({ kind: 'second', valueMinor: 999 }, { 'idempotency-key': key });
    expect(replay.status).toBe(202);
    expect(await json(replay)).toEqual({ accepted: true, replayed: true });
    expect(await rows('kind', 'value_minor')).toEqual([{ kind: 'first', value_minor: '100' }]);
  });

  test('concurrent replays with changed bodies keep exactly one event, and every caller gets 202', async () => {
    const key = 'race-key-0001';
    const results = await Promise.all(Array.from({ length: 20 }, (_, i) => track({ kind: `k${i}` }, { 'idempotency-key': key })));
    expect(results.map((r) => r.status)).toEqual(Array(20).fill(202));
    const bodies = await Promise.all(results.map((r) => json<{ replayed: boolean }>(r)));
    expect(bodies.filter((b) => !b.replayed)).toHaveLength(1);
    expect(await count()).toBe(1);
  });

  test('the same key on another pixel is a separate event', async () => {
    const other = await json<{ workspace: { pixelKey: string } }>(
      await api.fetch('/api/v1/auth/context', { token: await env.issuer.token({ org: 'org-other' }) }),
    );
    await track({ kind: 'a' }, { 'idempotency-key': 'shared-key-01' });
    await track({ kind: 'b' }, { 'idempotency-key': 'shared-key-01' }, other.workspace.pixelKey);
    expect(await count()).toBe(2);
  });
});
