import type { Knex } from 'knex';

/** Idempotency records are kept at least this long, so a client's retry within a day replays. */
export const IDEMPOTENCY_RETENTION_MS = 24 * 60 * 60 * 1000;

/** Deletes records past retention; returns how many went. */
export async function purgeExpiredIdempotencyRecords(db: Knex, now = new Date()): Promise<number> {
  const cutoff = new Date(now.getTime() - IDEMPOTENCY_RETENTION_MS);
  return db('idempotency_records').where('created_at', '<', cutoff).delete();
}
