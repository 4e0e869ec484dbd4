import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { TEST_REDIS_URL } from '../support/env';
import { runExclusively } from '../../shared/runtime/exclusive-run';
import { expandWorkerQueues, SUPPLIER_QUEUES } from '../../shared/queues/names';

let redis: Redis;
let other: Redis;
const key = `fdt:exclusive:${randomBytes(4).toString('hex')}`;
beforeAll(() => {
  redis = new Redis(TEST_REDIS_URL, { maxRetriesPerRequest: null });
  other = new Redis(TEST_REDIS_URL, { maxRetriesPerRequest: null });
});
afterAll(async () => {
  await redis.del(key);
  redis.disconnect();
  other.disconnect();
});

describe('housekeeping across worker processes', () => {
  test('runs asked for at once from two connections never overlap, and every one of them runs', async () => {
    let running = 0;
    let most = 0;
    const finished: number[] = [];
    const run = (i: number) =>
      runExclusively(
        i % 2 ? redis : other,
        key,
        async () => {
          most = Math.max(most, ++running);
          await new Promise((r) => setTimeout(r, 30));
          running--;
          finished.push(i);
          return i;
        },
        { pollMs: 10 },
      );
    expect(await Promise.all([0, 1, 2, 3, 4].map(run))).toEqual([0, 1, 2, 3, 4]);
    expect(most).toBe(1);
    expect(finished.sort()).toEqual([0, 1, 2, 3, 4]);
    expect(await redis.exists(key)).toBe(0);
  });

  test('a lock left by a holder that died expires, and the next run takes it', async () => {
    await redis.set(key, 'a dead holder', 'PX', 300);
    expect(await runExclusively(other, key, async () => 'ran', { pollMs: 20 })).toBe('ran');
  });

  test('a run longer than the lock keeps it: the holder extends it while it runs', async () => {
    const order: string[] = [];
    const long = runExclusively(
      redis,
      key,
      async () => {
        order.push('long started');
        await new Promise((r) => setTimeout(r, 700));
        order.push('long finished');
      },
      { ttlMs: 200, pollMs: 10 },
    );
    await new Promise((r) => setTimeout(r, 50));
    const next = runExclusively(other, key, async () => void order.push('next ran'), { ttlMs: 200, pollMs: 10 });
    await Promise.all([long, next]);
    expect(order).toEqual(['long started', 'long finished', 'next ran']);
  });

  test('a run that fails releases the lock for the next', async () => {
    await expect(runExclusively(redis, key, async () => Promise.reject(new Error('boom')))).rejects.toThrow('boom');
    expect(await redis.exists(key)).toBe(0);
  });
});

describe('WORKER_QUEUES roles', () => {
  test('a role stands for its queues, mixed with single queue names, each once', () => {
    expect(expandWorkerQueues(['suppliers', 'supplier.sandbox-ctv', 'housekeeping', 'personas'])).toEqual({
      queues: [...SUPPLIER_QUEUES, 'maintenance', 'persona-extract'],
      unknown: [],
    });
    expect(expandWorkerQueues(['audiences', 'supplier.nowhere', 'constructor']).unknown).toEqual(['supplier.nowhere', 'constructor']);
  });
});
