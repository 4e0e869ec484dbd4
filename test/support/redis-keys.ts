import { Redis } from 'ioredis';
import { TEST_REDIS_URL } from './env';

/** Deletes every key under a test's Redis prefix, on the given connection or one of its own. */
export async function deleteKeysUnder(prefix: string, redis?: Redis): Promise<void> {
  const connection = redis ?? new Redis(TEST_REDIS_URL);
  try {
    let cursor = '0';
    do {
      const [next, keys] = await connection.scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', 500);
      if (keys.length) await connection.del(...keys);
      cursor = next;
    } while (cursor !== '0');
  } finally {
    if (!redis) connection.disconnect();
  }
}
