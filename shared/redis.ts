import { Redis, type RedisOptions } from 'ioredis';

/**
 * API-side Redis: fail fast. A request must not hang waiting for a dead Redis;
 * the caller turns the error into a 503.
 */
export function createApiRedis(url: string, extra: RedisOptions = {}): Redis {
  return new Redis(url, {
    lazyConnect: true,
    enableOfflineQueue: false,
    maxRetriesPerRequest: 1,
    connectTimeout: 2000,
    commandTimeout: 2000,
    retryStrategy: (attempt) => Math.min(attempt * 200, 2000),
    ...extra,
  });
}

/** Worker-side Redis for BullMQ: blocking commands need `maxRetriesPerRequest: null`. */
export function createWorkerRedis(url: string): Redis {
  return new Redis(url, { maxRetriesPerRequest: null, enableReadyCheck: true });
}

/**
 * Keys the per-request rate-limit script touches together (counters and the staff version): the
 * hash tag keeps them in one Redis Cluster slot, as a multi-key script requires.
 */
export const edgeKeyPrefix = (prefix: string): string => `${prefix}:{edge}`;

export function key(prefix: string, ...parts: string[]): string {
  return [prefix, ...parts].join(':');
}

export type { Redis };
