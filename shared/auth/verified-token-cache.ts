import { createHash } from 'node:crypto';
import type { Principal } from './principal';

/**
 * Verified tokens, keyed by the SHA-256 of the token (the token itself is never a key, so a heap
 * dump or a debug print of the cache holds no credential). An entry lives until the earlier of
 * the token's `exp` and `maxAgeMs` after verification: the age bound keeps a token signed by a
 * key the identity provider has since withdrawn from being accepted longer than the JWKS cache
 * would accept it anyway. Each entry also remembers the version of the key set that verified it
 * and is not served once the key set has been fetched again (a rotation may have withdrawn the
 * key). Bounded: the least recently used entry goes first.
 */
export class VerifiedTokenCache<T extends object = Principal> {
  private readonly entries = new Map<string, { principal: T; expiresAtMs: number; keySetVersion: unknown }>();

  constructor(
    private readonly maxAgeMs: number,
    private readonly max = 10_000,
  ) {}

  static keyOf(token: string): string {
    return createHash('sha256').update(token).digest('base64url');
  }

  get(key: string, keySetVersion: unknown, nowMs = Date.now()): T | undefined {
    const hit = this.entries.get(key);
    if (!hit) return undefined;
    this.entries.delete(key);
    if (hit.expiresAtMs <= nowMs || hit.keySetVersion !== keySetVersion) return undefined;
    this.entries.set(key, hit); // most recently used goes last
    return hit.principal;
  }

  set(key: string, principal: T, expSeconds: number, keySetVersion: unknown, nowMs = Date.now()): void {
    const expiresAtMs = Math.min(expSeconds * 1000, nowMs + this.maxAgeMs);
    if (expiresAtMs <= nowMs) return; // also: a max age of 0 turns the cache off
    this.entries.delete(key);
    if (this.entries.size >= this.max) this.entries.delete(this.entries.keys().next().value as string);
    this.entries.set(key, { principal: Object.freeze({ ...principal }), expiresAtMs, keySetVersion });
  }

  get size(): number {
    return this.entries.size;
  }
}
