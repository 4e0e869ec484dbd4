import type { Redis } from 'ioredis';
import { staffVersionKey } from '../staff/staff-version';
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
  /** The staff version (staff-version.ts), read in the same round trip so staff caches cost no extra one. */
  staffVersion: string;
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

type CountingRedis = Redis & {
  flightdeckRateLimitHit(key: string, versionKey: string, windowMs: string): Promise<[number, number, string]>;
};

/**
 * A fixed-window counter per bucket and client IP, kept in Redis: one round trip per request,
 * which also brings back the staff version.
 */
export class RateLimiter {
  private readonly redis: CountingRedis;
  private readonly versionKey: string;
  private readonly counterPrefix: string;

  constructor(redis: Redis, prefix: string) {
    // Registered once at start: ioredis then sends EVALSHA (the script's hash, not its text) and
    // falls back to EVAL by itself when the server has not seen the script yet.
    if (!('flightdeckRateLimitHit' in redis)) redis.defineCommand('flightdeckRateLimitHit', { numberOfKeys: 2, lua: SCRIPT });
    this.redis = redis as CountingRedis;
    this.versionKey = staffVersionKey(prefix);
    this.counterPrefix = `${edgeKeyPrefix(prefix)}:rl`;
  }

  async hit(rule: RateLimitRule, clientKey: string): Promise<RateLimitResult> {
    const redisKey = `${this.counterPrefix}:${rule.bucket}:${clientKey}`;
    const [count, ttlMs, staffVersion] = await this.redis.flightdeckRateLimitHit(redisKey, this.versionKey, String(rule.windowMs));
    return {
      limit: rule.limit,
      remaining: Math.max(0, rule.limit - count),
      resetSeconds: Math.max(1, Math.ceil(ttlMs / 1000)),
      allowed: count <= rule.limit,
      staffVersion: String(staffVersion),
    };
  }
}
