import type { Knex } from 'knex';
import type { RedisClient } from '../redis';
import { edgeKeyPrefix } from '../redis';

/**
 * Staff membership and assignments are cached in each API process (see staff-cache.ts). Every
 * change bumps this counter after it commits; the rate limiter reads it in the round trip it
 * already makes for each request, and a process whose cache was filled at another value drops it.
 */
export const staffVersionKey = (prefix: string): string => `${edgeKeyPrefix(prefix)}:staff-version`;

/**
 * How long a cached staff lookup is used at most, whatever the counter says: the bound on how long
 * a change whose announcement could not reach Redis (bin/admin.ts then exits non-zero and says so)
 * can go unseen by a running API.
 */
export const STAFF_CACHE_MAX_AGE_MS = 10_000;

/** What every change to staff rows needs: the database, and a way to tell running APIs after commit. */
export interface StaffWriter {
  db: Knex;
  announce(): Promise<void>;
}

export function staffWriter(db: Knex, redis: RedisClient, prefix: string): StaffWriter {
  return {
    db,
    async announce() {
      await redis.incr(staffVersionKey(prefix));
    },
  };
}
