import { randomUUID } from 'node:crypto';
import type { RedisClient } from '../redis';

// Deletes or extends the lock only while it still holds our token: an expired lock taken over
// by another process is theirs.
const RELEASE = `if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) end return 0`;
const EXTEND = `if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('pexpire', KEYS[1], ARGV[2]) end return 0`;

export interface ExclusiveRunOptions {
  /**
   * How long the lock outlives a holder that died without releasing it. Short, because a live
   * holder extends it every third of it: a killed worker holds up the housekeeping of every
   * other process for at most this long.
   */
  ttlMs?: number;
  /** How often a waiting run asks again. */
  pollMs?: number;
}

/**
 * Runs `fn` while holding a Redis lock on `key`, so that across every worker process only one
 * run of it is under way at a time. A second caller waits for the first to finish and then runs
 * itself: asking for a run always gets a whole run that started after the ask. The lock is
 * extended while `fn` runs and expires after `ttlMs` if its holder dies.
 */
export async function runExclusively<T>(redis: RedisClient, key: string, fn: () => Promise<T>, opts: ExclusiveRunOptions = {}): Promise<T> {
  const ttlMs = opts.ttlMs ?? 15_000;
  const pollMs = opts.pollMs ?? 200;
  const token = randomUUID();
  while ((await redis.set(key, token, 'PX', ttlMs, 'NX')) !== 'OK') {
    await new Promise((r) => setTimeout(r, pollMs));
  }
  const keepAlive = setInterval(() => void redis.eval(EXTEND, 1, key, token, String(ttlMs)).catch(() => undefined), Math.floor(ttlMs / 3));
  keepAlive.unref();
  try {
    return await fn();
  } finally {
    clearInterval(keepAlive);
    await redis.eval(RELEASE, 1, key, token).catch(() => undefined);
  }
}
