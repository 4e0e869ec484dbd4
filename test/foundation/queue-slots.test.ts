import { QueueKeys } from 'bullmq';
import { loadConfig } from '../../shared/config/config';
import { jobQueues, queuePrefix } from '../../shared/queues/names';
import { createApiRedis, edgeKeyPrefix, redisTarget, type Cluster } from '../../shared/redis';
import { markerKey, pixelStreamKey } from '../../shared/pixel/pixel-stream';
import { keySlot } from '../support/redis-cluster';

/**
 * On a Redis Cluster, BullMQ's scripts touch many keys of one queue at once, so a queue's keys
 * must share a slot; and queues must not all share one slot, or one node carries every queue.
 */
const prefix = 'flightdeck';
const keysOf = (queue: string) => Object.values(new QueueKeys(queuePrefix(prefix, queue)).getKeys(queue)).filter(Boolean);

describe('queue keys on a Redis Cluster', () => {
  test('the slot function agrees with Redis (CLUSTER KEYSLOT examples from its documentation)', () => {
    expect(keySlot('somekey')).toBe(11058);
    expect(keySlot('foo{hash_tag}')).toBe(2515);
    expect(keySlot('{user1000}.following')).toBe(keySlot('{user1000}.followers'));
  });

  test("every key of a queue is in that queue's one slot, under REDIS_PREFIX", () => {
    for (const queue of jobQueues()) {
      const keys = keysOf(queue);
      expect(keys.length).toBeGreaterThan(10);
      expect(new Set(keys.map(keySlot))).toEqual(new Set([keySlot(`{${queue}}`)]));
      for (const key of keys) expect(key.startsWith(`${prefix}:{${queue}}:`)).toBe(true);
    }
  });

  test('each queue has a slot of its own', () => {
    const queues = jobQueues();
    const slots = new Map(queues.map((q) => [q, keySlot(keysOf(q)[0]!)]));
    expect(new Set(slots.values()).size).toBe(queues.length);
    // Spread over a three-primary cluster's even split of the slots, every primary gets supplier queues.
    const thirds = new Set([...slots].filter(([q]) => q.startsWith('supplier.')).map(([, s]) => Math.floor((s * 3) / 16384)));
    expect(thirds.size).toBe(3);
  });

  test("keys one script touches together share a slot: the rate limit's, the pixel's", () => {
    expect(keySlot(`${edgeKeyPrefix(prefix)}:rl:client`)).toBe(keySlot(`${edgeKeyPrefix(prefix)}:staff-version`));
    expect(keySlot(pixelStreamKey(prefix))).toBe(keySlot(markerKey(prefix, 'pk', 'idem')));
  });

  test('REDIS_CLUSTER_NODES takes host:port seeds and refuses anything else', () => {
    expect(loadConfig({ REDIS_CLUSTER_NODES: ' 10.0.0.1:7000, redis-b:7001 ' }).REDIS_CLUSTER_NODES).toEqual([
      '10.0.0.1:7000',
      'redis-b:7001',
    ]);
    expect(loadConfig({}).REDIS_CLUSTER_NODES).toEqual([]);
    expect(() => loadConfig({ REDIS_CLUSTER_NODES: 'redis://10.0.0.1:7000' })).toThrow(/REDIS_CLUSTER_NODES/);
    expect(() => loadConfig({ REDIS_CLUSTER_NODES: '10.0.0.1' })).toThrow(/host:port/);
  });

  test("with seed nodes the client is a cluster client, with the URL's credentials and TLS on every node", () => {
    const client = createApiRedis(redisTarget('rediss://svc:s%40cret@ignored:6379', ['10.0.0.1:7000', 'redis-b:7001']));
    try {
      expect(client.isCluster).toBe(true);
      const { redisOptions, enableOfflineQueue } = (client as Cluster).options;
      expect(redisOptions).toMatchObject({ username: 'svc', password: 's@cret', tls: {}, maxRetriesPerRequest: 1, commandTimeout: 2000 });
      expect(enableOfflineQueue).toBe(false);
    } finally {
      client.disconnect();
    }
    const single = createApiRedis(redisTarget('redis://127.0.0.1:6379'));
    expect(single.isCluster).toBe(false);
    single.disconnect();
  });
});
