import type { Knex } from 'knex';
import { notFound } from '../errors';
import { isHuman, type Principal } from '../auth/principal';

/**
 * Ops is a server-owned role apart from staff membership: it shows every tenant's queued work
 * (ids only), so no token, header or customer permission grants it. `npm run admin -- ops …`
 * is the one way to change it, and a revocation holds from the next request.
 */
export async function isActiveOps(db: Knex, userId: string): Promise<boolean> {
  return Boolean(await db('ops_members').where({ user_id: userId, active: true }).first('user_id'));
}

/** Queue inspection: anyone but an active ops member in a human session gets the same 404 as an unknown route. */
export async function requireOps(db: Knex, p: Principal): Promise<void> {
  if (!isHuman(p) || !(await isActiveOps(db, p.userId))) throw notFound();
}

export async function grantOps(db: Knex, userId: string): Promise<'granted' | 'reactivated' | 'unchanged'> {
  const existing = await db('ops_members').where({ user_id: userId }).first();
  if (!existing) {
    await db('ops_members').insert({ user_id: userId });
    return 'granted';
  }
  if (existing.active) return 'unchanged';
  await db('ops_members').where({ user_id: userId }).update({ active: true, revoked_at: null, granted_at: db.fn.now() });
  return 'reactivated';
}

export async function revokeOps(db: Knex, userId: string): Promise<'revoked' | 'not-ops'> {
  const n = await db('ops_members').where({ user_id: userId, active: true }).update({ active: false, revoked_at: db.fn.now() });
  return n > 0 ? 'revoked' : 'not-ops';
}

export async function listOps(db: Knex): Promise<Array<{ userId: string; active: boolean }>> {
  const rows = await db('ops_members').orderBy('user_id').select('user_id', 'active');
  return rows.map((r) => ({ userId: r.user_id as string, active: r.active as boolean }));
}
