import { createTestEnv, json, type TestEnv } from '../support/api';
import { newSigningKey } from '../support/issuer';
import { freePort } from '../support/ports';
import { ExternalIssuer } from './external-issuer';
import { toolCall } from './support';

/**
 * /mcp with a production authorization server (MCP_ISSUER) whose keys become unreachable. A
 * 401 makes an assistant start OAuth again and ask a person to sign in; while the issuer is
 * down, the token may be fine, so the answer is the API's: keys served before are still used,
 * and a grant that needs keys we cannot get is 503 with retry-after.
 */
let env: TestEnv;
let issuer: ExternalIssuer;
beforeAll(async () => {
  env = await createTestEnv();
  issuer = await ExternalIssuer.start(env.issuer);
});
afterAll(async () => {
  await issuer?.close();
  await env.close();
});
afterEach(() => {
  issuer.jwksFailing = null;
});

/** An API whose /mcp trusts the external issuer; each keeps its own copy of the issuer's keys. */
async function endpoint(extra: Record<string, string> = {}) {
  const port = await freePort();
  const resourceUrl = `http://127.0.0.1:${port}/mcp`;
  await env.api({
    PORT: String(port),
    MCP_ISSUER: issuer.url,
    MCP_RESOURCE_URL: resourceUrl,
    MCP_EXCHANGE_CLIENT_SECRET: 'exchange-secret-for-tests',
    ...extra,
  });
  return {
    grant: (claims: Record<string, unknown> = {}, key = issuer.key) => issuer.grant(resourceUrl, claims, key),
    call: (grant: string) =>
      fetch(resourceUrl, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', authorization: `Bearer ${grant}` },
        body: JSON.stringify(toolCall('list_personas')),
      }),
  };
}

async function expectUnavailable(res: Response) {
  expect(res.status).toBe(503);
  expect(res.headers.get('retry-after')).toMatch(/^[1-9]\d*$/);
  expect(res.headers.get('www-authenticate')).toBeNull();
  expect(await json(res)).toMatchObject({ code: 'auth_verifier_unavailable', recovery: 'transient' });
}

describe('the issuer’s keys cannot be fetched', () => {
  test('a JWKS answering 5xx makes a grant 503 with retry-after, not the 401 that restarts OAuth; 200 once it answers', async () => {
    const mcp = await endpoint();
    const grant = await mcp.grant();
    for (const status of [500, 502, 503]) {
      issuer.jwksFailing = status;
      await expectUnavailable(await mcp.call(grant));
    }
    issuer.jwksFailing = null;
    expect((await mcp.call(grant)).status).toBe(200);
  });

  test('keys fetched before the outage keep verifying grants after their cache age', async () => {
    const mcp = await endpoint({ AUTH_JWKS_CACHE_MAX_AGE_MS: '0' });
    expect((await mcp.call(await mcp.grant())).status).toBe(200);
    issuer.jwksFailing = 503;
    const before = issuer.jwksFetches;
    // A grant not seen before: verified now, with the keys last fetched.
    expect((await mcp.call(await mcp.grant({ org_id: 'acme-2' }))).status).toBe(200);
    expect(issuer.jwksFetches).toBeGreaterThan(before);
  });

  test('a grant signed with a key we never had is 503 while the issuer is down and 401 once it is up', async () => {
    const mcp = await endpoint({ AUTH_JWKS_CACHE_MAX_AGE_MS: '0' });
    expect((await mcp.call(await mcp.grant())).status).toBe(200);
    const stranger = await mcp.grant({}, await newSigningKey());
    issuer.jwksFailing = 502;
    await expectUnavailable(await mcp.call(stranger));
    issuer.jwksFailing = null;
    const up = await mcp.call(stranger);
    expect(up.status).toBe(401);
    expect(up.headers.get('www-authenticate')).toMatch(/^Bearer error="invalid_token"/);
  });

  test('a bad signature is 401 during the outage', async () => {
    const mcp = await endpoint({ AUTH_JWKS_CACHE_MAX_AGE_MS: '0' });
    expect((await mcp.call(await mcp.grant())).status).toBe(200);
    issuer.jwksFailing = 503;
    const forger = { ...(await newSigningKey()), kid: issuer.key.kid };
    expect((await mcp.call(await mcp.grant({}, forger))).status).toBe(401);
  });
});
