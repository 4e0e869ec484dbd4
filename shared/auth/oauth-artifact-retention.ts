import type { Knex } from 'knex';

/**
 * Authorization codes, sessions, grants and interactions of the embedded authorization server
 * past their expiry. The store already ignores them (an expired code is refused whether or not
 * its row remains), so deleting them changes no answer; it only stops the table growing.
 * Rows without an expiry are kept.
 */
export async function purgeExpiredOauthArtifacts(db: Knex, now = new Date()): Promise<number> {
  return db('oauth_artifacts').where('expires_at', '<', now).delete();
}
