import { createHash, randomUUID } from 'node:crypto';
import { decodeJwt } from 'jose';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { createTestEnv, json, type TestEnv } from '../support/api';
import { draftCampaign } from '../support/bookings';
import { TEST_AUDIENCE } from '../support/issuer';
import { AssistantAuth, Browser, CLIENT_ID, call, connectAs, forgeGrant, rpc, startMcpWorld, toolCall, type McpWorld } from './support';

let env: TestEnv;
let world: McpWorld;
let client: Client;
let grant: string;
let verifier: string;
let code: string;

const grantClaims = { sub: 'alice', org_id: 'acme', product: 'flightdeck', client_id: CLIENT_ID, scope: 'flightdeck' };

beforeAll(async () => {
  env = await createTestEnv();
  world = await startMcpWorld(env);
  const connected = await connectAs(world, { user: 'alice', workspace: 'acme' });
  ({ client, code } = connected);
  grant = connected.auth.saved!.access_token;
  verifier = connected.auth.verifier!;
});
afterAll(async () => {
  await client?.close();
  await env.close();
});

const resourceMetadata = () => `resource_metadata="${world.api.url}/.well-known/oauth-protected-resource/mcp"`;

async function expectRefused(res: Response) {
  expect(res.status).toBe(401);
  const challenge = res.headers.get('www-authenticate') ?? '';
  expect(challenge).toMatch(/^Bearer /);
  expect(challenge).toContain(resourceMetadata());
}

function authorizeUrl(params: Record<string, string | undefined>) {
  const u = new URL('/oauth/auth', world.api.url);
  const defaults = {
    client_id: CLIENT_ID,
    redirect_uri: world.redirectUri,
    response_type: 'code',
    scope: 'flightdeck',
    resource: world.resourceUrl,
    state: 'xyz',
    code_challenge: createHash('sha256').update('v'.repeat(50)).digest('base64url'),
    code_challenge_method: 'S256',
  };
  for (const [k, v] of Object.entries({ ...defaults, ...params })) if (v !== undefined) u.searchParams.set(k, v);
  return u.href;
}

describe('who may not use /mcp', () => {
  test('a tool call without a token is a 401 naming the resource metadata, and prepares nothing', async () => {
    await expectRefused(
      await rpc(world, toolCall('prepare_action', { name: 'campaign.launch', parameters: {}, budgetMinor: 0, currency: 'GBP' })),
    );
    expect(await env.db('agent_runs').count('* as n')).toEqual([{ n: '0' }]);
  });

  test('an API token, a person’s or a delegated agent’s, is refused at /mcp', async () => {
    for (const token of [await world.human('acme', 'alice'), await world.issuer.sign({ org: 'acme', user: 'alice', agent: CLIENT_ID })]) {
      await expectRefused(await rpc(world, toolCall('list_personas'), { authorization: `Bearer ${token}` }));
    }
  });

  test('a grant for /mcp is refused by the REST API', async () => {
    const res = await world.api.fetch('/api/v1/auth/context', { token: grant });
    expect(res.status).toBe(401);
    expect((await rpc(world, toolCall('list_personas'), { authorization: `Bearer ${grant}` })).status).toBe(200);
  });

  test('a shared static bearer token or a browser cookie never authenticates an agent', async () => {
    await expectRefused(await rpc(world, toolCall('list_personas'), { authorization: 'Bearer shared-static-secret' }));
    await expectRefused(await rpc(world, toolCall('list_personas'), { cookie: `session=${grant}; _session=abc` }));
  });

  test('an expired grant and a grant for another audience are refused; the same grant for this audience works', async () => {
    const issuer = world.api.url;
    // Forged with the server's key, naming the consent the test's own sign-in gave.
    const claims = { ...grantClaims, grant_id: decodeJwt(grant).grant_id };
    const valid = await forgeGrant(env, claims, { issuer, audience: world.resourceUrl });
    expect((await rpc(world, toolCall('list_personas'), { authorization: `Bearer ${valid}` })).status).toBe(200);
    const expired = await forgeGrant(env, claims, {
      issuer,
      audience: world.resourceUrl,
      expiresAt: Math.floor(Date.now() / 1000) - 60,
    });
    await expectRefused(await rpc(world, toolCall('list_personas'), { authorization: `Bearer ${expired}` }));
    for (const audience of [TEST_AUDIENCE, `${world.api.url}/other`]) {
      const wrong = await forgeGrant(env, claims, { issuer, audience });
      await expectRefused(await rpc(world, toolCall('list_personas'), { authorization: `Bearer ${wrong}` }));
    }
  });

  test("workspace A's grant cannot read workspace B: 404, the same as an id that never existed", async () => {
    const other = await world.human('globex');
    const { campaignId } = await draftCampaign(world.api, other, [{ channel: 'ctv', adapterKey: 'manual', budgetMinor: 5_000 }]);
    const theirs = await call(client, 'get_campaign', { id: campaignId });
    const none = await call(client, 'get_campaign', { id: randomUUID() });
    expect(theirs.isError).toBe(true);
    expect(theirs.structuredContent).toMatchObject({ status: 404, code: 'not_found', recovery: 'terminal' });
    const { requestId: _a, ...a } = theirs.structuredContent!;
    const { requestId: _b, ...b } = none.structuredContent!;
    expect(a).toEqual(b);
  });

  test('an agent cannot do what only a person may: there is no approve tool, and a step that is not its own cannot be resolved', async () => {
    const { tools } = await client.listTools();
    expect(tools.filter((t) => /approve|abandon|mandate_put|put_mandate/.test(t.name))).toEqual([]);
    // An unknown tool is a protocol error (-32602), as both protocol versions specify.
    await expect(call(client, 'approve_action', { id: randomUUID() })).rejects.toThrow(/-32602.*approve_action not found/);
    const resolve = await call(client, 'resolve_step', {
      id: randomUUID(),
      expectedActionDigest: 'a'.repeat(64),
      outcome: 'applied',
      note: 'I say so',
    });
    // No step of this agent's by that id: refused before anything is looked at further.
    expect(resolve.isError).toBe(true);
    expect(resolve.structuredContent).toMatchObject({ status: 404, code: 'not_found' });
  });
});

describe('what the authorization server refuses', () => {
  test('a valid S256 request reaches the sign-in; without PKCE, or with plain PKCE, the client gets invalid_request', async () => {
    const ok = await new Browser().go(authorizeUrl({}));
    expect(ok.status).toBe(303);
    expect(ok.headers.get('location')).toMatch(/^\/oauth\/interaction\//);
    for (const pkce of [
      { code_challenge: undefined, code_challenge_method: undefined },
      { code_challenge_method: 'plain', code_challenge: 'a'.repeat(43) },
    ]) {
      const res = await new Browser().go(authorizeUrl(pkce));
      expect(res.status).toBe(303);
      const back = new URL(res.headers.get('location')!);
      expect(back.href.startsWith(world.redirectUri)).toBe(true);
      expect(back.searchParams.get('error')).toBe('invalid_request');
      expect(back.searchParams.get('code')).toBeNull();
    }
  });

  test('a wrong redirect URL or an unknown client is refused on the page, never redirected', async () => {
    for (const params of [
      { redirect_uri: 'http://127.0.0.1:1/elsewhere' },
      { redirect_uri: `${world.redirectUri}/extra` },
      { client_id: 'not-registered' },
    ]) {
      const res = await new Browser().go(authorizeUrl(params));
      expect(res.status).toBe(400);
      expect(res.headers.get('location')).toBeNull();
    }
  });

  test('a code is used once: the second exchange is invalid_grant', async () => {
    const res = await fetch(`${world.api.url}/oauth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        grant_type: 'authorization_code',
        code,
        code_verifier: verifier,
        redirect_uri: world.redirectUri,
        client_id: CLIENT_ID,
        resource: world.resourceUrl,
      }),
    });
    expect(res.status).toBe(400);
    expect(await json(res)).toMatchObject({ error: 'invalid_grant' });
  });

  test('there is no dynamic client registration', async () => {
    const metadata = await json(await fetch(`${world.api.url}/.well-known/oauth-authorization-server`));
    expect(metadata).not.toHaveProperty('registration_endpoint');
    for (const path of ['/oauth/reg', '/register', '/oauth/register']) {
      const res = await fetch(`${world.api.url}${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ redirect_uris: ['http://127.0.0.1:1/cb'], client_name: 'intruder' }),
      });
      expect(res.status).toBe(404);
    }
    // An assistant that only knows how to register cannot connect.
    const unregistered = new AssistantAuth(world.redirectUri);
    unregistered.clientInformation = () => undefined as never;
    (unregistered as unknown as { saveClientInformation: () => void }).saveClientInformation = () => undefined;
    const { auth } = await import('@modelcontextprotocol/sdk/client/auth.js');
    await expect(auth(unregistered, { serverUrl: world.resourceUrl })).rejects.toThrow(/registration/i);
  });

  test('the token exchange is only for the agent endpoint: the public client cannot trade its grant for an API credential', async () => {
    const res = await fetch(`${world.api.url}/oauth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        grant_type: 'urn:ietf:params:oauth:grant-type:token-exchange',
        client_id: CLIENT_ID,
        subject_token: grant,
        subject_token_type: 'urn:ietf:params:oauth:token-type:access_token',
        audience: TEST_AUDIENCE,
      }),
    });
    expect(res.status).toBeGreaterThanOrEqual(400);
    expect(await json(res)).toEqual({ error: 'invalid_request', error_description: 'requested grant type is not allowed for this client' });
  });

  test('a second sign-in for another workspace is a separate grant bound to that workspace', async () => {
    const other = await connectAs(world, { user: 'alice', workspace: 'globex' });
    expect(other.consentHtml).toContain('data-workspace>globex<');
    const ctx = await call(other.client, 'list_campaigns');
    const globex = await json<{ campaigns: Array<{ advertiserId?: string }> }>(
      await world.api.fetch('/api/v1/campaigns', { token: await world.human('globex') }),
    );
    expect(ctx.structuredContent).toEqual(globex);
    await other.client.close();
  });
});

/** JSON text of `levels` nested objects around 1. */
const nested = (levels: number) => '{"a":'.repeat(levels) + '1' + '}'.repeat(levels);

describe('what /mcp refuses in a body, as the REST API does', () => {
  const evidence = (runId: string, contentLevels: number) =>
    fetch(world.resourceUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', authorization: `Bearer ${grant}` },
      // Built as text: a value this deep is past what JSON.stringify may walk.
      body: `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"record_evidence","arguments":{"id":"${runId}","kind":"k","source":"s","content":${nested(contentLevels)}}}}`,
    });

  test.each([1_000, 6_000, 100_000])(
    'tool arguments nested %i levels deep are refused before anything runs, and nothing is stored',
    async (levels) => {
      const before = await env.db('agent_evidence').count('* as n');
      const errorsBefore = world.api.logs.filter((l) => Number(l.level) >= 50).length;
      const res = await evidence(randomUUID(), levels);
      expect(res.status).toBe(400);
      expect(await json(res)).toMatchObject({
        jsonrpc: '2.0',
        id: null,
        error: { code: -32600, data: { status: 400, code: 'body_too_deep', recovery: 'correctable' } },
      });
      expect(await env.db('agent_evidence').count('* as n')).toEqual(before);
      expect(world.api.logs.filter((l) => Number(l.level) >= 50).length).toBe(errorsBefore);
    },
  );

  test('arguments within the REST limit of 64 levels reach the tool', async () => {
    // The arguments object and 63 objects below it (content the first): 64 levels, as deep as a REST body may nest.
    const res = await evidence(randomUUID(), 63);
    expect(res.status).toBe(200);
    const body = await json<{ result: { isError: boolean; structuredContent: Record<string, unknown> } }>(res);
    // It ran: the run is unknown.
    expect(body.result).toMatchObject({ isError: true, structuredContent: { status: 404, code: 'not_found' } });
    expect((await evidence(randomUUID(), 64)).status).toBe(400);
  });
});
