import { notFound } from '../errors';
import { isHuman, type Principal } from '../auth/principal';
import type { StaffMember } from './staff-store';
import type { StaffCache } from './staff-cache';

export type StaffContext = StaffMember;

// One answer per request: the route's authorize step and its handler share it, even if the staff
// cache is dropped in between. Keyed by the request's principal object, so nothing outlives the request.
const lookups = new WeakMap<Principal, Promise<StaffMember | null>>();

/**
 * The staff surface answers 404 to anyone who is not active staff in a human session:
 * a customer, a delegated agent and a revoked member cannot even tell it exists.
 */
export async function requireStaff(staff: StaffCache, p: Principal): Promise<StaffContext> {
  if (!isHuman(p)) throw notFound();
  let lookup = lookups.get(p);
  if (!lookup) {
    lookup = staff.find(p.userId);
    lookups.set(p, lookup);
  }
  const member = await lookup;
  if (!member) throw notFound();
  return member;
}

export function requireAssigned(staff: StaffContext, advertiserId: string): void {
  if (!staff.assignedAdvertiserIds.includes(advertiserId)) throw notFound();
}
