import { createTestEnv, json, type TestEnv } from '../support/api';
import { newSigningKey } from '../support/issuer';

let env: TestEnv;
beforeAll(async () => {
  env = await createTestEnv();
});
afterAll(() => env.close());
afterEach(() => {
  env.issuer.failing = false;
});

// A cache age of zero makes every verification go back to the identity provider, so its
// outage is felt at once, as it would be after the normal cache age.
const ALWAYS_REFETCH = { AUTH_JWKS_CACHE_MAX_AGE_MS: '0' };

describe('identity provider outage', () => {
  test('keys verified before the outage keep verifying tokens after the cache age, while the provider fails', async () => {
    const api = await env.api(ALWAYS_REFETCH);
    const token = await env.issuer.token({ org: 'org-idp-1' });
    expect((await api.fetch('/api/v1/auth/context', { token })).status).toBe(200);
    env.issuer.failing = true;
    const fetchesBefore = env.issuer.fetches;
    const res = await api.fetch('/api/v1/auth/context', { token });
    expect(res.status).toBe(200);
    // The provider was asked and failed: the answer came from the keys it last published.
    expect(env.issuer.fetches).toBeGreaterThan(fetchesBefore);
  });

  test('a bad signature is still 401 during the outage', async () => {
    const api = await env.api(ALWAYS_REFETCH);
    expect((await api.fetch('/api/v1/auth/context', { token: await env.issuer.token() })).status).toBe(200);
    env.issuer.failing = true;
    // A key with the published key id but different key material: the signature cannot verify.
    const forger = { ...(await newSigningKey()), kid: env.issuer.keys[0]!.kid };
    const res = await api.fetch('/api/v1/auth/context', { token: await env.issuer.token({ key: forger }) });
    expect(res.status).toBe(401);
  });

  test('an unknown key id is 503 with retry-after while the provider is down, and 401 once it is up and the key is really unknown', async () => {
    const api = await env.api(ALWAYS_REFETCH);
    expect((await api.fetch('/api/v1/auth/context', { token: await env.issuer.token() })).status).toBe(200);
    const stranger = await env.issuer.token({ key: await newSigningKey() });
    env.issuer.failing = true;
    const down = await api.fetch('/api/v1/auth/context', { token: stranger });
    expect(down.status).toBe(503);
    expect(down.headers.get('retry-after')).toMatch(/^[1-9]\d*$/);
    expect(await json(down)).toMatchObject({ code: 'auth_verifier_unavailable', recovery: 'transient' });
    env.issuer.failing = false;
    const up = await api.fetch('/api/v1/auth/context', { token: stranger });
    expect(up.status).toBe(401);
  });

  test('a key rotated in during the outage is fetched once the provider is back', async () => {
    const api = await env.api(ALWAYS_REFETCH);
    expect((await api.fetch('/api/v1/auth/context', { token: await env.issuer.token() })).status).toBe(200);
    env.issuer.failing = true;
    const next = await env.issuer.rotate();
    const rotated = await env.issuer.token({ key: next });
    expect((await api.fetch('/api/v1/auth/context', { token: rotated })).status).toBe(503);
    env.issuer.failing = false;
    expect((await api.fetch('/api/v1/auth/context', { token: rotated })).status).toBe(200);
  });

  test('keys older than the maximum staleness are not used: the outage is a 503', async () => {
    const api = await env.api({ ...ALWAYS_REFETCH, AUTH_JWKS_MAX_STALE_MS: '0' });
    const token = await env.issuer.token();
    expect((await api.fetch('/api/v1/auth/context', { token })).status).toBe(200);
    env.issuer.failing = true;
    const res = await api.fetch('/api/v1/auth/context', { token });
    expect(res.status).toBe(503);
    expect(res.headers.get('retry-after')).toMatch(/^[1-9]\d*$/);
  });
});
