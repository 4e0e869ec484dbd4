import type { Knex } from 'knex';
import { ensureWorkspace } from '../workspaces/workspace-store';
import type { StaffWriter } from './staff-version';

/**
 * Staff membership and client assignments are server-owned rows: no token claim,
 * header or customer permission can grant them.
 */
export interface StaffMember {
  /** The member's stable uuid, which lines record as assignedToUserId. */
  id: string;
  userId: string;
  displayName: string | null;
  active: boolean;
  assignedAdvertiserIds: string[];
}

export async function findActiveStaff(db: Knex, userId: string): Promise<StaffMember | null> {
  const member = await db('staff_members').where({ user_id: userId, active: true }).first();
  if (!member) return null;
  const assignments = await db('staff_assignments').where({ staff_user_id: userId }).orderBy('advertiser_id').pluck('advertiser_id');
  return { id: member.id, userId, displayName: member.display_name ?? null, active: true, assignedAdvertiserIds: assignments as string[] };
}

/**
 * The changes below each announce themselves after they commit (staff-version.ts), so that no
 * API process keeps serving what it cached before; the announcement failing fails the call.
 */
export async function grantStaff(w: StaffWriter, userId: string, displayName?: string): Promise<'granted' | 'reactivated' | 'unchanged'> {
  const outcome = await grant(w.db, userId, displayName);
  await w.announce();
  return outcome;
}

async function grant(db: Knex, userId: string, displayName?: string): Promise<'granted' | 'reactivated' | 'unchanged'> {
  const existing = await db('staff_members').where({ user_id: userId }).first();
  if (!existing) {
    await db('staff_members').insert({ user_id: userId, display_name: displayName ?? null });
    return 'granted';
  }
  if (existing.active) return 'unchanged';
  await db('staff_members')
    .where({ user_id: userId })
    .update({ active: true, revoked_at: null, granted_at: db.fn.now(), display_name: displayName ?? existing.display_name });
  return 'reactivated';
}

export async function revokeStaff(w: StaffWriter, userId: string): Promise<'revoked' | 'not-staff'> {
  const { db } = w;
  const n = await db('staff_members').where({ user_id: userId, active: true }).update({ active: false, revoked_at: db.fn.now() });
  // Announced even when nothing changed here: a retry after a failed announcement must reach the APIs.
  await w.announce();
  return n > 0 ? 'revoked' : 'not-staff';
}

export async function assignClient(w: StaffWriter, userId: string, advertiserId: string): Promise<'assigned' | 'unchanged' | 'not-staff'> {
  const { db } = w;
  const member = await db('staff_members').where({ user_id: userId }).first();
  if (!member) return 'not-staff';
  await ensureWorkspace(db, advertiserId);
  const rows = await db('staff_assignments')
    .insert({ staff_user_id: userId, advertiser_id: advertiserId })
    .onConflict(['staff_user_id', 'advertiser_id'])
    .ignore()
    .returning('advertiser_id');
  await w.announce();
  return rows.length ? 'assigned' : 'unchanged';
}

export async function unassignClient(w: StaffWriter, userId: string, advertiserId: string): Promise<'unassigned' | 'not-assigned'> {
  const n = await w.db('staff_assignments').where({ staff_user_id: userId, advertiser_id: advertiserId }).delete();
  await w.announce();
  return n > 0 ? 'unassigned' : 'not-assigned';
}
