import { getEventListeners } from 'node:events';
import { Redis } from 'ioredis';
import { createTestEnv, json, type TestApi, type TestEnv } from '../support/api';
import { until } from '../support/wait';
import { runMaintenanceJob } from '../support/maintenance';
import { createLogger } from '../../shared/logger';
import { PIXEL_WRITER_GROUP, pixelDeadLetterKey, pixelStreamKey } from '../../shared/pixel/pixel-stream';
import { PixelWriter } from '../../workers/pixel-writer';

let env: TestEnv;
let api: TestApi;
let pixelKey: string;
const connections: Redis[] = [];
const writers: PixelWriter[] = [];

beforeAll(async () => {
  env = await createTestEnv();
  api = await env.api();
  const ctx = await json<{ workspace: { pixelKey: string } }>(
    await api.fetch('/api/v1/auth/context', { token: await env.issuer.token({ org: 'org-writer' }) }),
  );
  pixelKey = ctx.workspace.pixelKey;
});
afterEach(async () => {
  await Promise.all(writers.splice(0).map((w) => w.close()));
  connections.splice(0).forEach((c) => c.disconnect());
  await env.redis.del(pixelStreamKey(env.prefix), pixelDeadLetterKey(env.prefix));
  await env.db('pixel_events').delete();
});
afterAll(() => env.close());

/** A writer on its own connection, as a worker process has; started only when a test says so. */
async function writer(
  opts: { reclaimIdleMs?: number; forgetIdleMs?: number; batchSize?: number; lingerMs?: number; db?: TestEnv['db'] } = {},
): Promise<PixelWriter> {
  const redis = new Redis(env.config().REDIS_URL!, { maxRetriesPerRequest: null });
  connections.push(redis);
  const w = new PixelWriter({ redis, prefix: env.prefix, db: opts.db ?? env.db, logger: createLogger('silent'), blockMs: 100, ...opts });
  await w.ensureGroup();
  writers.push(w);
  return w;
}

const track = (body: unknown = { kind: 'pageview' }, headers: Record<string, string> = {}) =>
  api.fetch(`/api/v1/t/${pixelKey}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });
const post = async (n: number, body = (i: number) => ({ kind: 'pageview', valueMinor: i })) => {
  const statuses = await Promise.all(Array.from({ length: n }, (_, i) => track(body(i)).then((r) => r.status)));
  expect(statuses).toEqual(Array(n).fill(202));
};
const count = async () => Number((await env.db('pixel_events').count({ n: '*' }))[0]!.n);
const waiting = () => env.redis.xlen(pixelStreamKey(env.prefix));
const pendingCount = async () => Number(((await env.redis.xpending(pixelStreamKey(env.prefix), PIXEL_WRITER_GROUP)) as [number])[0]);

describe('the pixel writer', () => {
  test('every accepted pageview is stored once, and the stream is emptied behind it', async () => {
    const w = await writer({ batchSize: 50 });
    w.start();
    await post(300);
    await until('all stored', async () => (await waiting()) === 0);
    expect(await count()).toBe(300);
    // Each row once: the values 0..299 each appear exactly once.
    const values = (await env.db('pixel_events').orderBy('value_minor').pluck('value_minor')).map(Number);
    expect(values).toEqual(Array.from({ length: 300 }, (_, i) => i));
    expect(await pendingCount()).toBe(0);
  });

  test('under a trickle of pageviews, a short batch lets the next ones gather into one insert', async () => {
    const w = await writer({ lingerMs: 1000 });
    w.start();
    await post(1);
    await until('the first stored', async () => (await count()) === 1);
    // Ten more, one every 20 ms: read as they come, each would be a batch (an insert) of its own.
    for (let i = 0; i < 10; i++) {
      await post(1);
      await new Promise((r) => setTimeout(r, 20));
    }
    await until('all stored', async () => (await count()) === 11);
    // Rows written by one insert share its transaction id.
    const inserts = await env.db('pixel_events').countDistinct({ n: env.db.raw('xmin::text') });
    expect(Number(inserts[0]!.n)).toBeLessThanOrEqual(3);
    expect(await pendingCount()).toBe(0);
  });

  test('pausing between batches leaves nothing behind on the writer: no listener piles up for its stop', async () => {
    const w = await writer({ lingerMs: 5 });
    w.start();
    for (let i = 0; i < 15; i++) {
      await post(1);
      await until('stored', async () => (await count()) === i + 1);
    }
    // Each pause listens for the writer's stop; one that outlived its pause would stay for ever.
    expect(getEventListeners(w['stopping'].signal, 'abort').length).toBeLessThanOrEqual(1);
  });

  test('every field is stored as sent, whatever its characters, and rows follow the stream order', async () => {
    const w = await writer();
    const odd = `quote " backslash \\ comma, brace { } ü 日本 ${String.fromCodePoint(0x1f600)}`;
    const sent = [
      { kind: odd, event: 'signup', value: 1234.56, valueMinor: 123456, promoCode: 'SPRING-24' },
      { kind: 'pageview' },
      { event: 'purchase', value: 0.01, valueMinor: 1, promoCode: odd },
    ];
    for (const [i, body] of sent.entries()) expect((await track(body, { 'idempotency-key': `key-fields-${i}` })).status).toBe(202);
    w.start();
    await until('all stored', async () => (await count()) === 3);
    const rows = await env
      .db('pixel_events')
      .orderBy('id')
      .select('kind', 'event', 'value', 'value_minor', 'promo_code', 'idempotency_key');
    expect(rows).toEqual([
      { kind: odd, event: 'signup', value: '1234.56', value_minor: '123456', promo_code: 'SPRING-24', idempotency_key: 'key-fields-0' },
      { kind: 'pageview', event: null, value: null, value_minor: null, promo_code: null, idempotency_key: 'key-fields-1' },
      { kind: null, event: 'purchase', value: '0.01', value_minor: '1', promo_code: odd, idempotency_key: 'key-fields-2' },
    ]);
  });

  test('an accepted pageview is stamped with when it was accepted, not when it was stored', async () => {
    await writer();
    const before = Date.now();
    await post(1);
    const after = Date.now();
    await new Promise((r) => setTimeout(r, 1100));
    const w = writers[0]!;
    w.start();
    await until('stored', async () => (await count()) === 1);
    const { received_at: at } = await env.db('pixel_events').first('received_at');
    expect((at as Date).getTime()).toBeGreaterThanOrEqual(before - 5);
    expect((at as Date).getTime()).toBeLessThanOrEqual(after + 5);
  });

  test('idempotent replays accepted while nothing is stored yet keep the first event only', async () => {
    await writer();
    const first = await json(await track({ kind: 'first' }, { 'idempotency-key': 'order-0001-view' }));
    const replays = await Promise.all(
      Array.from({ length: 10 }, (_, i) => track({ kind: `replay-${i}` }, { 'idempotency-key': 'order-0001-view' }).then((r) => json(r))),
    );
    expect(first).toEqual({ accepted: true, replayed: false });
    expect(replays).toEqual(Array(10).fill({ accepted: true, replayed: true }));
    // The replays never entered the stream.
    expect(await waiting()).toBe(1);
    writers[0]!.start();
    await until('stored', async () => (await waiting()) === 0);
    expect(await env.db('pixel_events').pluck('kind')).toEqual(['first']);
  });

  test('a writer killed after its insert but before its acknowledgement: another takes its entries over, nothing doubled or lost', async () => {
    const dying = await writer();
    await post(40);
    const batch = await dying.readNew();
    expect(batch).toHaveLength(40);
    await dying.store(batch);
    // Killed here: rows committed, entries still pending to the dead consumer.
    expect(await count()).toBe(40);
    expect(await pendingCount()).toBe(40);
    await post(10, (i) => ({ kind: 'later', valueMinor: 1000 + i }));

    const heir = await writer({ reclaimIdleMs: 0 });
    heir.start();
    await until('all acknowledged', async () => (await waiting()) === 0 && (await pendingCount()) === 0);
    expect(await count()).toBe(50);
    expect(Number((await env.db('pixel_events').countDistinct({ n: 'value_minor' }))[0]!.n)).toBe(50);
  });

  test('a live writer does not take over entries another is still writing', async () => {
    const busy = await writer();
    await post(5);
    await busy.readNew();
    const other = await writer({ reclaimIdleMs: 60_000 });
    expect(await other.reclaim()).toEqual([]);
    expect(await other.readNew()).toEqual([]);
  });

  test('a writer gone without leaving is forgotten once silent; one still holding entries, and live ones, stay in the group', async () => {
    const stream = pixelStreamKey(env.prefix);
    const holder = await writer();
    await env.redis.xgroup('CREATECONSUMER', stream, PIXEL_WRITER_GROUP, 'gone-writer');
    await post(3);
    expect(await holder.readNew()).toHaveLength(3);
    await new Promise((r) => setTimeout(r, 120));
    const live = await writer();
    await post(1);
    expect(await live.readNew()).toHaveLength(1);

    const housekeeper = await writer({ forgetIdleMs: 100 });
    expect(await housekeeper.forgetSilentConsumers()).toBe(1);
    const names = ((await env.redis.xinfo('CONSUMERS', stream, PIXEL_WRITER_GROUP)) as unknown[][]).map((c) => c[1]);
    expect(names.sort()).toEqual([holder.consumer, live.consumer].sort());
    // The silent holder's entries are still pending: nothing it read was dropped.
    expect(await pendingCount()).toBe(4);
  });

  test('while PostgreSQL refuses the writes, pageviews are still accepted; when it takes them again, none is lost', async () => {
    const w = await writer();
    w.start();
    await post(20);
    await until('first stored', async () => (await count()) === 20);
    await env.db.schema.renameTable('pixel_events', 'pixel_events_away');
    try {
      await post(30, (i) => ({ kind: 'during', valueMinor: 100 + i }));
      // The writer has tried and failed: its batch stays pending, nothing is set aside.
      await until('a failed attempt', async () => (await pendingCount()) > 0);
      expect(await waiting()).toBe(30);
      expect(await env.redis.exists(pixelDeadLetterKey(env.prefix))).toBe(0);
    } finally {
      await env.db.schema.renameTable('pixel_events_away', 'pixel_events');
    }
    await until('all stored', async () => (await waiting()) === 0, 30_000);
    expect(await count()).toBe(50);
    expect(await env.db('pixel_events').where({ kind: 'during' }).count({ n: '*' })).toEqual([{ n: '30' }]);
  });

  test('a pageview the database refuses is set aside for a person, and the rest of its batch is stored', async () => {
    const w = await writer();
    await post(3);
    // An entry whose workspace does not exist (23503): no retry would ever store it.
    await env.redis.xadd(pixelStreamKey(env.prefix), '*', 'e', JSON.stringify(['org-gone', 'px_gone', null, { kind: 'orphan' }]));
    w.start();
    await until('stream drained', async () => (await waiting()) === 0);
    expect(await count()).toBe(3);
    const refused = await env.redis.xrange(pixelDeadLetterKey(env.prefix), '-', '+');
    expect(refused).toHaveLength(1);
    expect(refused[0]![1]).toEqual(expect.arrayContaining(['code', '23503']));
  });

  test('a day is not rolled up while a pageview accepted on it still waits to be stored', async () => {
    await env.workers({ WORKER_QUEUES: 'housekeeping' });
    const twoDaysAgo = Date.now() - 2 * 86_400_000;
    const day = new Date(twoDaysAgo).toISOString().slice(0, 10);
    await env.redis.xadd(
      pixelStreamKey(env.prefix),
      `${twoDaysAgo}-0`,
      'e',
      JSON.stringify(['org-writer', pixelKey, null, { kind: 'late' }]),
    );
    await runMaintenanceJob(env, 'rollup-pageviews');
    const rolledThrough = async () =>
      String((await env.db('pixel_rollup_state').first(env.db.raw("to_char(rolled_through, 'YYYY-MM-DD') as d")))?.d ?? '');
    expect(await rolledThrough()).not.toBe('');
    expect((await rolledThrough()) < day).toBe(true);

    (await writer()).start();
    await until('stored', async () => (await waiting()) === 0);
    await runMaintenanceJob(env, 'rollup-pageviews');
    expect((await rolledThrough()) >= day).toBe(true);
    const counted = await env.db('pixel_daily_counts').where({ advertiser_id: 'org-writer', day }).first('pageviews');
    expect(Number(counted?.pageviews)).toBe(1);
  });

  test('the route answers 503 and accepts nothing when Redis is unreachable', async () => {
    const down = await env.api({}, { redisUrl: 'redis://127.0.0.1:1' });
    try {
      const res = await down.fetch(`/api/v1/t/${pixelKey}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: '{"kind":"pv"}',
      });
      expect(res.status).toBe(503);
      expect(res.headers.get('retry-after')).toMatch(/^\d+$/);
      expect(await waiting()).toBe(0);
    } finally {
      await down.close();
    }
  });

  test('a pageview Redis refuses to queue is a 503, never a 202', async () => {
    // The stream's key holding something else makes the append fail, as a refusing Redis would.
    await env.redis.set(pixelStreamKey(env.prefix), 'not a stream');
    const res = await track();
    expect(res.status).toBe(503);
    expect(await json(res)).toMatchObject({ code: 'dependency_unavailable', recovery: 'transient' });
  });
});
