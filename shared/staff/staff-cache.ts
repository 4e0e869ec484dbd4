import type { Knex } from 'knex';
import { findActiveStaff, type StaffMember } from './staff-store';
import { STAFF_CACHE_MAX_AGE_MS } from './staff-version';

interface Entry {
  member: StaffMember | null;
  generation: number;
  filledAtMs: number;
}

/**
 * Staff lookups (membership and client assignments) of this API process, keyed by user id, so
 * that the auth context and the staff surface do not query them on every request. Never serves a
 * revoked member: each request's rate-limit round trip reports the staff version (staff-version.ts),
 * `observe` drops every entry when it differs from the one the cache was filled at, and a lookup
 * that started before a change is not remembered after it. Until a version has been observed (at
 * start, or after Redis failed) nothing is cached. Entries also age out after STAFF_CACHE_MAX_AGE_MS.
 */
export class StaffCache {
  private readonly entries = new Map<string, Entry>();
  private version: string | null = null;
  /** Moves on every change of version, so a lookup can tell whether one happened while it ran. */
  private generation = 0;

  constructor(
    private readonly db: Knex,
    private readonly maxAgeMs = STAFF_CACHE_MAX_AGE_MS,
    private readonly max = 10_000,
  ) {}

  /** The staff version this request's round trip to Redis returned; null when Redis could not be asked. */
  observe(version: string | null): void {
    if (version !== null && version === this.version) return;
    this.version = version;
    this.generation++;
    this.entries.clear();
  }

  /** The active staff member with this user id and their assignments, or null. */
  async find(userId: string, nowMs = Date.now()): Promise<StaffMember | null> {
    const hit = this.entries.get(userId);
    if (hit && hit.generation === this.generation && nowMs - hit.filledAtMs < this.maxAgeMs) return hit.member;
    const generation = this.generation;
    const member = await findActiveStaff(this.db, userId);
    // A change announced while the query ran may not be in what it read: use it for this request only.
    if (this.version !== null && generation === this.generation) {
      this.entries.delete(userId);
      if (this.entries.size >= this.max) this.entries.delete(this.entries.keys().next().value as string);
      this.entries.set(userId, { member, generation, filledAtMs: nowMs });
    }
    return member;
  }

  async isActive(userId: string): Promise<boolean> {
    return (await this.find(userId)) !== null;
  }
}
