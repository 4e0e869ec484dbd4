import { VerifiedTokenCache } from '../../shared/auth/verified-token-cache';
import type { Principal } from '../../shared/auth/principal';

const principal: Principal = {
  userId: 'u1',
  advertiserId: 'org-1',
  product: 'flightdeck',
  channels: ['search'] as Principal['channels'],
  permissions: [],
  agentClientId: null,
};

describe('verified token cache', () => {
  test('keys are the SHA-256 of the token, never the token', () => {
    const token = 'eyJhbGciOiJFUzI1NiJ9.eyJzdWIiOiJ1MSJ9.c2ln';
    const key = VerifiedTokenCache.keyOf(token);
    expect(key).not.toContain(token);
    expect(key).toHaveLength(43);
    expect(VerifiedTokenCache.keyOf(token)).toBe(key);
  });

  test('an entry is not served at or after the token exp', () => {
    const cache = new VerifiedTokenCache(60_000);
    const now = 1_000_000_000_000;
    cache.set('k', principal, now / 1000 + 10, 1, now);
    expect(cache.get('k', 1, now + 9_999)).toEqual(principal);
    expect(cache.get('k', 1, now + 10_000)).toBeUndefined();
  });

  test('an entry is not served past the maximum age, even when the token lives longer', () => {
    const cache = new VerifiedTokenCache(5_000);
    const now = 1_000_000_000_000;
    cache.set('k', principal, now / 1000 + 3600, 1, now);
    expect(cache.get('k', 1, now + 4_999)).toEqual(principal);
    expect(cache.get('k', 1, now + 5_000)).toBeUndefined();
  });

  test('a maximum age of zero remembers nothing', () => {
    const cache = new VerifiedTokenCache(0);
    cache.set('k', principal, Date.now() / 1000 + 3600, 1);
    expect(cache.get('k', 1)).toBeUndefined();
  });

  test('an entry verified with an earlier key set is not served once the key set was fetched again', () => {
    const cache = new VerifiedTokenCache(60_000);
    cache.set('k', principal, Date.now() / 1000 + 3600, 1);
    expect(cache.get('k', 2)).toBeUndefined();
  });

  test('bounded: the least recently used entry is evicted first', () => {
    const cache = new VerifiedTokenCache(60_000, 2);
    const exp = Date.now() / 1000 + 3600;
    cache.set('a', principal, exp, 1);
    cache.set('b', principal, exp, 1);
    cache.get('a', 1);
    cache.set('c', principal, exp, 1);
    expect(cache.size).toBe(2);
    expect(cache.get('b', 1)).toBeUndefined();
    expect(cache.get('a', 1)).toBeDefined();
    expect(cache.get('c', 1)).toBeDefined();
  });
});
