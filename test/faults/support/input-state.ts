import type { Redis } from 'ioredis';
import type { Knex } from 'knex';
import { edgeKeyPrefix } from '../../../shared/redis';

/**
 * Everything a request could have changed, as one comparable value: for every table of the
 * database its row count and a digest of its rows (so an update shows, not only an insert),
 * and for every Redis key under the file's prefix its type and size. Rate-limit counters are
 * left out: every request, refused or not, counts against its client's window.
 */
export interface StateFingerprint {
  tables: Record<string, { rows: number; digest: string }>;
  redis: Record<string, string>;
}

export async function fingerprint(db: Knex, redis: Redis, prefix: string): Promise<StateFingerprint> {
  const names = (await db('information_schema.tables')
    .where({ table_schema: 'public', table_type: 'BASE TABLE' })
    .orderBy('table_name')
    .pluck('table_name')) as string[];
  const tables: StateFingerprint['tables'] = {};
  for (const name of names) {
    const { rows } = await db.raw(
      `select count(*)::int as n, md5(coalesce(string_agg(t::text, chr(10) order by t::text), '')) as digest from ?? t`,
      [name],
    );
    tables[name] = { rows: rows[0].n, digest: rows[0].digest };
  }
  const keys: string[] = [];
  let cursor = '0';
  do {
    const [next, batch] = await redis.scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', 1000);
    keys.push(...batch.filter((k) => !k.startsWith(`${edgeKeyPrefix(prefix)}:rl:`)));
    cursor = next;
  } while (cursor !== '0');
  const described: StateFingerprint['redis'] = {};
  for (const key of keys.sort()) described[key] = await describeKey(redis, key);
  return { tables, redis: described };
}

async function describeKey(redis: Redis, key: string): Promise<string> {
  const type = await redis.type(key);
  const size: Record<string, () => Promise<number>> = {
    string: () => redis.strlen(key),
    list: () => redis.llen(key),
    set: () => redis.scard(key),
    zset: () => redis.zcard(key),
    hash: () => redis.hlen(key),
    stream: () => redis.xlen(key),
  };
  // Keys that expire on their own (a stopped worker's stalled-check marker) are marked, so that
  // their expiry is not taken for a change a request made.
  const volatile = (await redis.pttl(key)) > 0 ? ':expiring' : '';
  return `${type}:${size[type] ? await size[type]() : 0}${volatile}`;
}

/** What differs between two fingerprints, as readable lines (empty when nothing changed). */
export function differences(before: StateFingerprint, after: StateFingerprint): string[] {
  const out: string[] = [];
  for (const name of new Set([...Object.keys(before.tables), ...Object.keys(after.tables)])) {
    const a = before.tables[name];
    const b = after.tables[name];
    if (a?.digest !== b?.digest) out.push(`table ${name}: ${a?.rows ?? 'absent'} rows → ${b?.rows ?? 'absent'} rows (contents changed)`);
  }
  for (const key of new Set([...Object.keys(before.redis), ...Object.keys(after.redis)])) {
    // Expired between the scan and the look at it (`none`), or gone from the scan: either way it ran out on its own.
    if (before.redis[key]?.endsWith(':expiring') && (after.redis[key] === undefined || after.redis[key]!.startsWith('none:'))) continue;
    if (before.redis[key] !== after.redis[key])
      out.push(`redis ${key}: ${before.redis[key] ?? 'absent'} → ${after.redis[key] ?? 'absent'}`);
  }
  return out;
}
