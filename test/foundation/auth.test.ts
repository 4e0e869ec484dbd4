import { SignJWT, base64url } from 'jose';
import { createTestEnv, json, type TestApi, type TestEnv } from '../support/api';
import { newSigningKey } from '../support/issuer';
import { grantStaff, assignClient, revokeStaff } from '../../shared/staff/staff-store';

let env: TestEnv;
let api: TestApi;

beforeAll(async () => {
  env = await createTestEnv({ rateLimits: 'default' });
  api = await env.api();
});
afterAll(() => env.close());

const context = (token?: string, headers: Record<string, string> = {}) =>
  api.fetch('/api/v1/auth/context', { ...(token ? { token } : {}), headers });

async function expect401(res: Response) {
  expect(res.status).toBe(401);
  expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
  const body = await json(res);
  expect(body).toMatchObject({ status: 401, code: 'unauthenticated', recovery: 'terminal' });
  expect(res.headers.get('x-ratelimit-limit')).toBe('300');
  expect(res.headers.get('x-request-id')).toBeTruthy();
}

describe('bearer tokens', () => {
  test('a valid token is accepted and the context describes the human caller', async () => {
    const token = await env.issuer.token({ org: 'org-a', user: 'alice', permissions: ['operator:reconcile', 'agent:approve'] });
    const res = await context(token);
    expect(res.status).toBe(200);
    expect(await json(res)).toMatchObject({
      user: { id: 'alice' },
      advertiser: { id: 'org-a' },
      product: 'flightdeck',
      channels: ['ctv', 'audio', 'tv', 'cinema', 'dooh', 'search', 'social'],
      permissions: ['agent:approve', 'operator:reconcile'],
      actor: 'human',
      delegated: false,
      agent: null,
      staff: false,
    });
  });

  test('a missing Authorization header is refused with 401', async () => {
    await expect401(await context());
  });

  test('the scheme name is case-insensitive: "bearer" and "BEARER" work like "Bearer"', async () => {
    const token = await env.issuer.token({ org: 'org-case' });
    for (const scheme of ['bearer', 'BEARER', 'bEaReR']) {
      const res = await context(undefined, { authorization: `${scheme} ${token}` });
      expect(res.status).toBe(200);
    }
  });

  test('a header that is not "Bearer <jwt>" is refused with 401', async () => {
    await expect401(await context(undefined, { authorization: 'Basic YWxpY2U6c2VjcmV0' }));
    await expect401(await context(undefined, { authorization: 'Bearer not-a-jwt' }));
  });

  test('a token signed by a key the issuer never published is refused', async () => {
    const stranger = await newSigningKey();
    // Same kid as the real key, so only the signature can tell them apart.
    stranger.kid = env.issuer.keys[0]!.kid;
    await expect401(await context(await env.issuer.token({ key: stranger })));
  });

  test('an unsigned token (alg none) is refused', async () => {
    const header = base64url.encode(JSON.stringify({ alg: 'none', typ: 'JWT' }));
    const payload = base64url.encode(
      JSON.stringify({
        sub: 'mallory',
        org_id: 'org-a',
        iss: 'https://issuer.test.flightdeck.dev/',
        aud: 'https://api.test.flightdeck.dev',
        exp: Math.floor(Date.now() / 1000) + 600,
      }),
    );
    await expect401(await context(`${header}.${payload}.`));
  });

  test('an HS256 token whose secret is the public key is refused', async () => {
    const publicJwk = env.issuer.keys[0]!.publicJwk;
    const secret = new TextEncoder().encode(JSON.stringify(publicJwk));
    const forged = await new SignJWT({ org_id: 'org-a' })
      .setProtectedHeader({ alg: 'HS256', kid: publicJwk.kid! })
      .setSubject('mallory')
      .setIssuer('https://issuer.test.flightdeck.dev/')
      .setAudience('https://api.test.flightdeck.dev')
      .setExpirationTime('5m')
      .sign(secret);
    await expect401(await context(forged));
  });

  test('an expired token is refused and says so', async () => {
    const res = await context(await env.issuer.token({ expiresIn: Math.floor(Date.now() / 1000) - 60 }));
    await expect401(res.clone());
    expect((await json(res)).detail).toMatch(/expired/);
  });

  test('a token from another issuer is refused', async () => {
    await expect401(await context(await env.issuer.token({ issuer: 'https://evil.example/' })));
  });

  test('a token for another audience is refused', async () => {
    await expect401(await context(await env.issuer.token({ audience: 'https://mcp.flightdeck.dev' })));
  });

  test('a token without the organisation claim is refused', async () => {
    await expect401(await context(await env.issuer.token({ omit: ['org_id'] })));
  });

  test('after the provider rotates its key, tokens from the new key work and the old key stops working', async () => {
    const oldToken = await env.issuer.token();
    expect((await context(oldToken)).status).toBe(200);
    const fetchesBefore = env.issuer.fetches;
    const next = await env.issuer.rotate();
    const newToken = await env.issuer.token({ key: next });
    expect((await context(newToken)).status).toBe(200);
    expect(env.issuer.fetches).toBeGreaterThan(fetchesBefore);
    await expect401(await context(oldToken));
  });

  test('when the JWKS cannot be fetched, the API answers 503 (transient), not 401', async () => {
    const offline = await env.api({ AUTH_JWKS_URL: 'http://127.0.0.1:9/jwks.json' });
    const res = await offline.fetch('/api/v1/auth/context', { token: await env.issuer.token() });
    expect(res.status).toBe(503);
    expect(await json(res)).toMatchObject({ code: 'auth_verifier_unavailable', recovery: 'transient' });
  });
});

describe('auth context', () => {
  test('a delegated agent token is reported as the agent acting for the user', async () => {
    const res = await context(await env.issuer.token({ user: 'alice', agent: 'client-planner' }));
    expect(await json(res)).toMatchObject({
      actor: 'agent',
      delegated: true,
      agent: { clientId: 'client-planner' },
      user: { id: 'alice' },
    });
  });

  test('the DOOH product limits channels to dooh, and a signed entitlement narrows further', async () => {
    expect(await json(await context(await env.issuer.token({ product: 'flightdeck-dooh' })))).toMatchObject({
      product: 'flightdeck-dooh',
      channels: ['dooh'],
    });
    expect(await json(await context(await env.issuer.token({ channels: ['tv', 'ctv'] })))).toMatchObject({ channels: ['ctv', 'tv'] });
  });

  test('an unknown product in the token is refused', async () => {
    await expect401(await context(await env.issuer.token({ product: 'other-product' })));
  });

  test('the first request of a new organisation provisions exactly one workspace, even when requests race', async () => {
    const token = await env.issuer.token({ org: 'org-new' });
    const results = await Promise.all(Array.from({ length: 8 }, () => context(token)));
    expect(results.map((r) => r.status)).toEqual(Array(8).fill(200));
    const pixelKeys = new Set(
      await Promise.all(results.map(async (r) => (await json<{ workspace: { pixelKey: string } }>(r)).workspace.pixelKey)),
    );
    expect(pixelKeys.size).toBe(1);
    expect(await env.db('workspaces').where({ id: 'org-new' }).count({ n: '*' })).toEqual([{ n: '1' }]);
  });

  test('unknown query parameters are refused with 400', async () => {
    const res = await api.fetch('/api/v1/auth/context?debug=1', { token: await env.issuer.token() });
    expect(res.status).toBe(400);
    expect(await json(res)).toMatchObject({ code: 'validation_failed' });
  });
});

describe('staff session', () => {
  const session = async (token: string) => json(await api.fetch('/api/v1/internal/session', { token }));

  test('a customer who is not staff gets access:false, whatever permissions the token claims', async () => {
    expect(await session(await env.issuer.token({ user: 'carol', permissions: ['staff', 'operator:reconcile'] }))).toEqual({
      access: false,
    });
  });

  test('active staff see their assigned clients; a delegated agent of the same user does not get staff access', async () => {
    await grantStaff(env.staff, 'stan', 'Stan');
    await assignClient(env.staff, 'stan', 'client-1');
    expect(await session(await env.issuer.token({ user: 'stan' }))).toEqual({
      access: true,
      userId: 'stan',
      displayName: 'Stan',
      assignedAdvertiserIds: ['client-1'],
    });
    expect(await session(await env.issuer.token({ user: 'stan', agent: 'client-planner' }))).toEqual({ access: false });
    expect(await json(await context(await env.issuer.token({ user: 'stan' })))).toMatchObject({ staff: true });
  });

  test('revoked staff lose access at once', async () => {
    await grantStaff(env.staff, 'rita');
    expect((await session(await env.issuer.token({ user: 'rita' }))).access).toBe(true);
    await revokeStaff(env.staff, 'rita');
    expect(await session(await env.issuer.token({ user: 'rita' }))).toEqual({ access: false });
  });
});
