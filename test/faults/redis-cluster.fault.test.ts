import { Redis } from 'ioredis';
import { createTestEnv, type TestApi, type TestEnv } from '../support/api';
import { launchPlan, sevenSandboxLines, waitForBooking, type Launched } from '../support/bookings';
import { keySlot, startRedisCluster, type LocalRedisCluster } from '../support/redis-cluster';
import { until } from '../support/wait';
import { SUPPLIER_QUEUES, queuePrefix } from '../../shared/queues/names';
import { QueueProducers } from '../../shared/queues/producers';
import { createWorkerRedis, redisTarget } from '../../shared/redis';
import { createLogger } from '../../shared/logger';
import { requeueVanished, VANISHED_AFTER_MS } from '../../workers/requeue-vanished';
import type { RunningWorkers } from '../../workers/main';
import { figure } from './support/input-report';

/**
 * The service on a real Redis Cluster: three primaries, each with a replica, on loopback.
 * Every connection (API, producers, workers, pixel, rate limits) is a cluster client. Needs
 * `redis-server` and `redis-cli` 7 or later on PATH (`--cluster-port`, `CLUSTER SHARDS`).
 */
let cluster: LocalRedisCluster;
let env: TestEnv;
let api: TestApi;
let clusterConfig: Record<string, string>;

beforeAll(async () => {
  cluster = await startRedisCluster({ primaries: 3, replicas: 1, nodeTimeoutMs: 1000 });
  env = await createTestEnv();
  clusterConfig = {
    REDIS_CLUSTER_NODES: cluster.seeds.join(','),
    OUTBOX_RELAY_INTERVAL_MS: '200',
    WORKER_LOCK_DURATION_MS: '3000',
    WORKER_STALLED_INTERVAL_MS: '1000',
  };
  api = await env.api(clusterConfig);
}, 120_000);

afterAll(async () => {
  await env?.close();
  await cluster?.close();
});

/** Which queues have keys on which node: each node answers SCAN for its own slots only. */
async function queuesByNode(): Promise<Map<number, Set<string>>> {
  const out = new Map<number, Set<string>>();
  for (const node of cluster.nodes.filter((n) => n.process.exitCode === null && n.process.signalCode === null)) {
    const client = new Redis(node.port, '127.0.0.1', { maxRetriesPerRequest: 1 });
    try {
      if (/role:master/.test(await client.info('replication'))) {
        const queues = new Set<string>();
        let cursor = '0';
        do {
          const [next, keys] = await client.scan(cursor, 'MATCH', `${env.prefix}:{*`, 'COUNT', 1000);
          for (const k of keys) queues.add(/^[^{]*\{([^}]+)\}/.exec(k)![1]!);
          cursor = next;
        } while (cursor !== '0');
        out.set(node.port, queues);
      }
    } finally {
      client.disconnect();
    }
  }
  return out;
}

/** Supplier booking attempts and sandbox receipts per line: each must be exactly one. */
async function bookingsPerLine(bookingIds: string[]) {
  const lines = await env.db('booking_lines').whereIn('booking_id', bookingIds).select('id', 'status');
  const attempts = await env.db('supplier_attempts').whereIn('booking_id', bookingIds).where({ operation: 'book' }).select('line_id');
  const receipts = await env
    .db('sandbox_ledger')
    .whereIn(
      'line_id',
      lines.map((l) => l.id),
    )
    .where({ operation: 'book' })
    .select('line_id');
  const count = (rows: Array<{ line_id: string }>) => {
    const n = new Map<string, number>();
    for (const r of rows) n.set(r.line_id, (n.get(r.line_id) ?? 0) + 1);
    return lines.map((l) => n.get(l.id) ?? 0);
  };
  return { lines, attempts: count(attempts), receipts: count(receipts) };
}

/** A launch through the API; while a failover settles, the API may answer 503 for a moment. */
async function launchOnce(i: number): Promise<Launched> {
  let last: unknown;
  for (let tries = 0; tries < 20; tries++) {
    try {
      return await launchPlan(env, api, sevenSandboxLines(), `org-cluster-${i % 4}`);
    } catch (err) {
      last = err;
      if (!/ 503 /.test(String(err))) throw err;
      await new Promise((r) => setTimeout(r, 250));
    }
  }
  throw last;
}

describe('on a three-primary Redis Cluster', () => {
  let workers: RunningWorkers;

  test('supplier queues spread over the primaries, and a launch books end to end', async () => {
    workers = await env.workers(clusterConfig);
    const launched = await launchOnce(0);
    const done = await waitForBooking(api, launched.token, launched.booking.id, (b) => b.status === 'confirmed', 60_000);
    expect(done.lines.map((l) => l.status)).toEqual(Array(7).fill('confirmed'));

    const byNode = await queuesByNode();
    const nodesWithSupplierQueues = [...byNode.values()].filter((qs) => [...qs].some((q) => q.startsWith('supplier.'))).length;
    figure(`cluster: supplier queue keys on ${nodesWithSupplierQueues} of ${byNode.size} primaries`);
    expect(nodesWithSupplierQueues).toBeGreaterThanOrEqual(2);
    // Each queue's keys are on exactly one node: the primary of the queue's slot.
    for (const line of done.lines) {
      const queue = `supplier.${line.adapterKey}`;
      const holders = [...byNode].filter(([, qs]) => qs.has(queue)).map(([port]) => port);
      expect(holders).toEqual([(await cluster.primaryOf(keySlot(queuePrefix(env.prefix, queue)))).port]);
    }
    const per = await bookingsPerLine([launched.booking.id]);
    expect(per.attempts).toEqual(Array(7).fill(1));
    expect(per.receipts).toEqual(Array(7).fill(1));

    // The pixel: accepted into the stream (with its replay marker, one script), stored by the writer, a replay stored once.
    const ctx = (await (await api.fetch('/api/v1/auth/context', { token: launched.token })).json()) as { workspace: { pixelKey: string } };
    const track = (key: string) =>
      api.fetch(`/api/v1/t/${ctx.workspace.pixelKey}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'idempotency-key': key },
        body: JSON.stringify({ kind: 'pageview' }),
      });
    const answers = await Promise.all(['pageview-1', 'pageview-2', 'pageview-3', 'pageview-1'].map(async (k) => (await track(k)).status));
    expect(answers).toEqual([202, 202, 202, 202]);
    await until('the pageviews to be stored', async () => {
      const [{ n }] = await env.db('pixel_events').where({ pixel_key: ctx.workspace.pixelKey }).count<{ n: string }[]>({ n: '*' });
      return Number(n) === 3;
    });
    await workers.close();
  }, 120_000);

  test('a primary killed and failed over loses no job the service had acknowledged', async () => {
    // Workers are stopped: the launches' jobs wait in their queues, acknowledged (relayed) but not run.
    const before = await Promise.all(Array.from({ length: 8 }, (_, i) => launchOnce(i + 1)));
    const ids = before.map((l) => l.booking.id);
    await until('every launch to be relayed to its queue', async () => {
      const pending = await env.db('outbox').whereNull('relayed_at').count<{ n: string }[]>({ n: '*' });
      return Number(pending[0]!.n) === 0;
    }).catch((err: Error) => {
      throw new Error(`${err.message}\n${api.rawLogs.filter((l) => /relay|redis/.test(l)).join('')}`);
    });
    const ctvSlot = keySlot(queuePrefix(env.prefix, 'supplier.sandbox-ctv'));
    const victim = await cluster.primaryOf(ctvSlot);
    const victimQueues = [...((await queuesByNode()).get(victim.port) ?? [])].filter((q) => SUPPLIER_QUEUES.includes(q));
    const killedAt = Date.now();
    await cluster.kill(victim);
    await cluster.healthy(60_000);
    const promoted = await cluster.primaryOf(ctvSlot);
    expect(promoted.port).not.toBe(victim.port);
    figure(`cluster: primary of ${victimQueues.join(', ')} killed; replica serving after ${Date.now() - killedAt} ms`);

    // Replication is asynchronous: a job added in the moment before the crash can be missing on
    // the replica. The outbox keeps every job, and the sweep for vanished work adds any such job
    // again; run it as if its ten minutes had passed, and count what it had to add.
    const producerRedis = createWorkerRedis(redisTarget(env.config(clusterConfig).REDIS_URL!, cluster.seeds));
    const producers = new QueueProducers(producerRedis, env.prefix);
    let requeued: number;
    try {
      requeued = await requeueVanished(env.db, producers.get, createLogger('silent'), {
        now: new Date(Date.now() + VANISHED_AFTER_MS + 60_000),
      });
    } finally {
      await producers.close();
      producerRedis.disconnect();
    }
    figure(`cluster: ${requeued} of ${ids.length * 7} jobs added again after the failover`);

    workers = await env.workers(clusterConfig);
    const after = await Promise.all(Array.from({ length: 4 }, (_, i) => launchOnce(i + 20)));
    const all = [...before, ...after];
    for (const l of all) await waitForBooking(api, l.token, l.booking.id, (b) => b.status === 'confirmed', 90_000);

    const per = await bookingsPerLine(all.map((l) => l.booking.id));
    expect(per.lines.every((l) => l.status === 'confirmed')).toBe(true);
    expect(per.attempts).toEqual(Array(all.length * 7).fill(1));
    expect(per.receipts).toEqual(Array(all.length * 7).fill(1));
    await workers.close();
  }, 240_000);
});
