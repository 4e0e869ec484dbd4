import { createTestEnv, json, type TestApi, type TestEnv } from '../support/api';
import { runScript } from '../support/processes';
import { StaffCache } from '../../shared/staff/staff-cache';
import { STAFF_CACHE_MAX_AGE_MS } from '../../shared/staff/staff-version';
import { assignClient, grantStaff, revokeStaff, unassignClient } from '../../shared/staff/staff-store';

let env: TestEnv;
let first: TestApi;
let second: TestApi;

beforeAll(async () => {
  env = await createTestEnv();
  // Two API processes' worth of deps on one database and Redis prefix, each with its own staff cache.
  first = await env.api();
  second = await env.api();
});
afterAll(() => env.close());

const session = async (api: TestApi, user: string) =>
  json<{ access: boolean; assignedAdvertiserIds?: string[] }>(
    await api.fetch('/api/v1/internal/session', { token: await env.issuer.token({ user }) }),
  );
const staffFlag = async (api: TestApi, user: string) =>
  (await json<{ staff: boolean }>(await api.fetch('/api/v1/auth/context', { token: await env.issuer.token({ user }) }))).staff;
const admin = (...args: string[]) => runScript('bin/admin.ts', args, env.processEnv());
/** Flips the row behind the caches' back, announcing nothing: only what a cache still holds can answer "active" after this. */
const revokeUnannounced = (user: string) => env.db('staff_members').where({ user_id: user }).update({ active: false });

describe('staff lookups are cached per API process but never outlive a change', () => {
  test('a member revoked by npm run admin in another process is refused on the very next request by every API that had cached them', async () => {
    await grantStaff(env.staff, 'rex');
    // Each API has now looked rex up and cached the answer.
    expect((await session(first, 'rex')).access).toBe(true);
    expect(await staffFlag(first, 'rex')).toBe(true);
    expect((await session(second, 'rex')).access).toBe(true);

    const revoked = await admin('staff', 'revoke', '--user', 'rex');
    expect(revoked).toMatchObject({ code: 0, stdout: 'staff rex: revoked\n' });

    expect(await session(first, 'rex')).toEqual({ access: false });
    expect(await staffFlag(first, 'rex')).toBe(false);
    expect(await session(second, 'rex')).toEqual({ access: false });
  });

  test('a grant and an unassignment are seen on the next request, not after the cache ages out', async () => {
    expect((await session(first, 'gia')).access).toBe(false);
    await grantStaff(env.staff, 'gia');
    await assignClient(env.staff, 'gia', 'org-g1');
    await assignClient(env.staff, 'gia', 'org-g2');
    expect(await session(first, 'gia')).toMatchObject({ access: true, assignedAdvertiserIds: ['org-g1', 'org-g2'] });

    await unassignClient(env.staff, 'gia', 'org-g1');
    expect(await session(first, 'gia')).toMatchObject({ access: true, assignedAdvertiserIds: ['org-g2'] });
    await revokeStaff(env.staff, 'gia');
    expect(await session(first, 'gia')).toEqual({ access: false });
  });

  test('when Redis cannot be told, npm run admin keeps the change, exits 3 and says when the APIs will see it', async () => {
    await grantStaff(env.staff, 'uma');
    const r = await runScript('bin/admin.ts', ['staff', 'revoke', '--user', 'uma'], env.processEnv({ REDIS_URL: 'redis://127.0.0.1:1' }));
    expect(r.code).toBe(3);
    expect(r.stderr).toMatch(/the change is saved, but running APIs could not be told/);
    expect(r.stderr).toContain(`within ${STAFF_CACHE_MAX_AGE_MS / 1000} s`);
    expect(await env.db('staff_members').where({ user_id: 'uma' }).first('active')).toEqual({ active: false });
  });
});

describe('the staff cache itself', () => {
  test('caches nothing until a staff version has been observed, nor after Redis failed', async () => {
    await grantStaff(env.staff, 'ned');
    const cache = new StaffCache(env.db);
    expect(await cache.isActive('ned')).toBe(true);
    await revokeUnannounced('ned');
    expect(await cache.isActive('ned')).toBe(false);

    await grantStaff(env.staff, 'nia');
    cache.observe('7');
    expect(await cache.isActive('nia')).toBe(true);
    cache.observe(null); // the rate limiter's round trip failed
    await revokeUnannounced('nia');
    expect(await cache.isActive('nia')).toBe(false);
  });

  test('a lookup that was running when the version changed is not remembered', async () => {
    await grantStaff(env.staff, 'ray');
    const cache = new StaffCache(env.db);
    cache.observe('1');
    const during = cache.find('ray');
    cache.observe('2'); // a change was announced while the query was on its way
    expect(await during).not.toBeNull();
    await revokeUnannounced('ray');
    expect(await cache.find('ray')).toBeNull();
  });

  test('an entry is used for STAFF_CACHE_MAX_AGE_MS at most, even if no change was announced', async () => {
    await grantStaff(env.staff, 'ola');
    const cache = new StaffCache(env.db);
    cache.observe('1');
    const t0 = Date.now();
    expect(await cache.find('ola', t0)).not.toBeNull();
    await revokeUnannounced('ola');
    expect(await cache.find('ola', t0 + STAFF_CACHE_MAX_AGE_MS)).toBeNull();
  });
});
