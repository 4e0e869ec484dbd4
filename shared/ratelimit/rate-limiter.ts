import type { RedisClient } from '../redis';
import { edgeKeyPrefix } from '../redis';

export interface RateLimitRule {
  bucket: string;
  limit: number;
  windowMs: number;
}

export interface RateLimitResult {
  limit: number;
  remaining: number;
  /** Seconds until the window resets. */
  resetSeconds: number;
  allowed: boolean;
  /** The value of the limiter's `readAlong` key, read in the same round trip (the staff version: staff caches then cost no extra one). */
  readAlong: string;
}

// Count and window start are one atomic step, so concurrent requests on any number of
// API processes sharing this Redis can never together exceed the limit.
const SCRIPT = `
local count = redis.call('INCR', KEYS[1])
if count == 1 then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end
local ttl = redis.call('PTTL', KEYS[1])
if ttl < 0 then
  redis.call('PEXPIRE', KEYS[1], ARGV[1])
  ttl = tonumber(ARGV[1])
end
return {count, ttl, redis.call('GET', KEYS[2]) or '0'}
`;

type CountingRedis = RedisClient & {
  flightdeckRateLimitHit(key: string, versionKey: string, windowMs: string): Promise<[number, number, string]>;
};

/**
 * A fixed-window counter per bucket and client IP, kept in Redis: one round trip per request,
 * which also brings back the value of one more key (`readAlong`), so a cache that must notice
 * changes promptly (the staff cache) costs no round trip of its own.
 */
export class RateLimiter {
  private readonly redis: CountingRedis;
  private readonly counterPrefix: string;

  constructor(
    redis: RedisClient,
    prefix: string,
    private readonly readAlongKey: string,
  ) {
    // Registered once at start: ioredis then sends EVALSHA (the script's hash, not its text) and
    // falls back to EVAL by itself when the server has not seen the script yet.
    if (!('flightdeckRateLimitHit' in redis)) redis.defineCommand('flightdeckRateLimitHit', { numberOfKeys: 2, lua: SCRIPT });
    this.redis = redis as CountingRedis;
    this.counterPrefix = `${edgeKeyPrefix(prefix)}:rl`;
  }

  async hit(rule: RateLimitRule, clientKey: string): Promise<RateLimitResult> {
    const redisKey = `${this.counterPrefix}:${rule.bucket}:${clientKey}`;
    const [count, ttlMs, readAlong] = await this.redis.flightdeckRateLimitHit(redisKey, this.readAlongKey, String(rule.windowMs));
    return {
      limit: rule.limit,
      remaining: Math.max(0, rule.limit - count),
      resetSeconds: Math.max(1, Math.ceil(ttlMs / 1000)),
      allowed: count <= rule.limit,
      readAlong: String(readAlong),
    };
  }
}
