import fs from 'node:fs';
import path from 'node:path';
import { decodeJwt } from 'jose';
import { createTestEnv, type TestEnv } from '../support/api';
import { TEST_AUDIENCE } from '../support/issuer';
import { CLIENT_ID, authorizationCode, forgeGrant, redeemCode, refreshGrant, rpc, toolCall, type McpWorld, startMcpWorld } from './support';

let env: TestEnv;
let world: McpWorld;

beforeAll(async () => {
  env = await createTestEnv();
  world = await startMcpWorld(env);
});
afterAll(() => env.close());

/** Whether the grant itself is still stored (a token issued under it that lands later is refused without it). */
const grantStored = async (grantId: string) =>
  (await env.db('oauth_artifacts').where({ model: 'Grant', id: grantId }).first()) !== undefined;
const listPersonas = (grant: string) => rpc(world, toolCall('list_personas'), { authorization: `Bearer ${grant}` });
const grantIdOf = async (code: string) =>
  String((await env.db('oauth_artifacts').where({ model: 'AuthorizationCode', id: code }).first('grant_id')).grant_id);

describe('codes and refresh tokens are used once, however many arrive at once', () => {
  test('of parallel redemptions of one code, one at most gets tokens; the others are invalid_grant and the grant is revoked', async () => {
    const { code, verifier } = await authorizationCode(world, { user: 'alice', workspace: 'acme' });
    const grantId = await grantIdOf(code);
    expect(await grantStored(grantId)).toBe(true);
    const answers = await Promise.all(Array.from({ length: 12 }, () => redeemCode(world, code, verifier)));
    const won = answers.filter((a) => a.status === 200);
    expect(won.length).toBeLessThanOrEqual(1);
    for (const a of answers.filter((x) => x.status !== 200)) expect(a).toMatchObject({ status: 400, body: { error: 'invalid_grant' } });
    // A reused code means the code leaked: nothing issued from it may go on working.
    expect(await grantStored(grantId)).toBe(false);
    for (const w of won)
      expect(await refreshGrant(world, w.body.refresh_token!)).toMatchObject({ status: 400, body: { error: 'invalid_grant' } });
  });

  test('of parallel refreshes with one refresh token, one at most gets a new chain; then the grant is revoked', async () => {
    const { code, verifier } = await authorizationCode(world, { user: 'alice', workspace: 'acme' });
    const first = await redeemCode(world, code, verifier);
    expect(first.status).toBe(200);
    const grantId = await grantIdOf(code);
    expect(await grantStored(grantId)).toBe(true);
    const answers = await Promise.all(Array.from({ length: 12 }, () => refreshGrant(world, first.body.refresh_token!)));
    const won = answers.filter((a) => a.status === 200);
    expect(won.length).toBeLessThanOrEqual(1);
    for (const a of answers.filter((x) => x.status !== 200)) expect(a).toMatchObject({ status: 400, body: { error: 'invalid_grant' } });
    expect(await grantStored(grantId)).toBe(false);
    for (const w of won) expect(await refreshGrant(world, w.body.refresh_token!)).toMatchObject({ status: 400 });
  });

  test('one redemption and one refresh at a time work as before', async () => {
    const { code, verifier } = await authorizationCode(world, { user: 'alice', workspace: 'acme' });
    const first = await redeemCode(world, code, verifier);
    expect(first.status).toBe(200);
    const second = await refreshGrant(world, first.body.refresh_token!);
    expect(second.status).toBe(200);
    expect(second.body.refresh_token).not.toBe(first.body.refresh_token);
    expect((await listPersonas(second.body.access_token!)).status).toBe(200);
    // The rotated-out refresh token is spent.
    expect(await refreshGrant(world, first.body.refresh_token!)).toMatchObject({ status: 400, body: { error: 'invalid_grant' } });
  });
});

describe('a revoked grant stops working', () => {
  const revoke = (token: string) =>
    fetch(`${world.api.url}/oauth/token/revocation`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ token, token_type_hint: 'refresh_token', client_id: CLIENT_ID }),
    });
  /** The agent endpoint's own exchange at the development server, as its credentials are renewed. */
  const exchange = (grant: string) => {
    const secret = JSON.parse(fs.readFileSync(path.join(env.dataDir, 'dev-authorization-server', 'keys.json'), 'utf8'))
      .exchangeClientSecret as string;
    return fetch(`${world.api.url}/oauth/token`, {
      method: 'POST',
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        authorization: `Basic ${Buffer.from(`flightdeck-mcp-resource:${secret}`).toString('base64')}`,
      },
      body: new URLSearchParams({
        grant_type: 'urn:ietf:params:oauth:grant-type:token-exchange',
        subject_token: grant,
        subject_token_type: 'urn:ietf:params:oauth:token-type:access_token',
        audience: TEST_AUDIENCE,
      }),
    });
  };

  test('a grant names the grant it was issued under, and lives minutes, not an hour', async () => {
    const { code, verifier } = await authorizationCode(world, { user: 'alice', workspace: 'acme' });
    const issued = await redeemCode(world, code, verifier);
    expect(issued.status).toBe(200);
    expect(decodeJwt(issued.body.access_token!).grant_id).toBe(await grantIdOf(code));
    expect(issued.body.expires_in).toBeLessThanOrEqual(600);
  });

  test('after the user revokes it, the exchange refuses it and /mcp answers 401; a live grant is still exchanged', async () => {
    const { code, verifier } = await authorizationCode(world, { user: 'alice', workspace: 'acme' });
    const issued = await redeemCode(world, code, verifier);
    const grant = issued.body.access_token!;
    expect((await exchange(grant)).status).toBe(200);
    expect((await revoke(issued.body.refresh_token!)).status).toBe(200);
    expect(await grantStored(decodeJwt(grant).grant_id as string)).toBe(false);

    const refused = await exchange(grant);
    expect(refused.status).toBe(400);
    expect(await refused.json()).toMatchObject({ error: 'invalid_grant' });
    const res = await listPersonas(grant);
    expect(res.status).toBe(401);
    expect(res.headers.get('www-authenticate')).toMatch(/^Bearer error="invalid_token"/);
  });

  test('a grant signed with the server’s key but naming no grant, or one that never existed, is not exchanged', async () => {
    const claims = { sub: 'alice', org_id: 'acme', product: 'flightdeck', client_id: CLIENT_ID, scope: 'flightdeck' };
    for (const extra of [{}, { grant_id: 'no-such-grant' }]) {
      const forged = await forgeGrant(env, { ...claims, ...extra }, { issuer: world.api.url, audience: world.resourceUrl });
      expect((await exchange(forged)).status).toBe(400);
      expect((await listPersonas(forged)).status).toBe(401);
    }
  });

  test('a code redeemed twice at once leaves no grant that /mcp accepts', async () => {
    const { code, verifier } = await authorizationCode(world, { user: 'alice', workspace: 'acme' });
    const answers = await Promise.all(Array.from({ length: 8 }, () => redeemCode(world, code, verifier)));
    for (const a of answers.filter((x) => x.status === 200)) expect((await listPersonas(a.body.access_token!)).status).toBe(401);
  });
});
