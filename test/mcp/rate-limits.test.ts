import { createTestEnv, json, type TestEnv } from '../support/api';
import { authorizationCode, redeemCode, rpc, startMcpWorld, toolCall, type McpWorld } from './support';

/**
 * What /mcp costs against the rate limits. Requests say where they come from with
 * X-Forwarded-For (the API trusts loopback proxies here), so an agent and the service itself
 * (127.0.0.1) have buckets of their own.
 */
const LIMIT = 40;
const EXTRACT_LIMIT = 3;
let env: TestEnv;
let world: McpWorld;
/** Grants signed in before any test spends 127.0.0.1's bucket: one in use, one never yet exchanged. */
let grant: string;
let unusedGrant: string;
beforeAll(async () => {
  env = await createTestEnv({ rateLimits: 'default' });
  world = await startMcpWorld(env, {
    RATE_LIMIT_MAX: String(LIMIT),
    RATE_LIMIT_EXTRACT_MAX: String(EXTRACT_LIMIT),
    // No persona worker runs here: each extraction gives up quickly, after it was charged.
    PERSONA_EXTRACT_TIMEOUT_MS: '100',
    TRUST_PROXY: 'loopback',
  });
  const issue = async () => {
    const { code, verifier } = await authorizationCode(world, { user: 'alice', workspace: 'acme' });
    return (await redeemCode(world, code, verifier)).body.access_token!;
  };
  grant = await issue();
  unusedGrant = await issue();
});
afterAll(() => env.close());

let address = 0;
/** A client address of its own, so each test starts with full buckets. */
const newClient = () => `203.0.113.${++address}`;

/** Spends the default bucket of requests that come from this machine without a forwarded address. */
async function spendLoopbackBucket() {
  for (let i = 0; i <= LIMIT; i++) {
    const res = await fetch(`${world.api.url}/nowhere`);
    if (res.status === 429) return;
  }
  throw new Error('the loopback bucket was never spent');
}

describe('the development authorization server is reached in process', () => {
  test('with 127.0.0.1’s bucket spent, an agent’s first call (keys, credential exchange) still answers', async () => {
    await spendLoopbackBucket();
    const res = await rpc(world, toolCall('list_personas'), { authorization: `Bearer ${unusedGrant}`, 'x-forwarded-for': newClient() });
    expect(res.status).toBe(200);
    expect(await json(res)).toMatchObject({ result: { structuredContent: { personas: [] } } });
  });
});

/** One tool call through /mcp from `client`, with the grant; the tool's result. */
async function callTool(client: string, name: string, args: Record<string, unknown>) {
  const res = await rpc(world, toolCall(name, args), { authorization: `Bearer ${grant}`, 'x-forwarded-for': client });
  expect(res.status).toBe(200);
  return (await json<{ result: { isError?: boolean; structuredContent: Record<string, unknown> } }>(res)).result;
}
const extract = (client: string) => callTool(client, 'extract_persona', { nlBrief: 'Young urban renters who stream on weekends' });

describe('/mcp is limited as the REST API is', () => {
  test('a JSON-RPC batch is one JSON-RPC error, small, and none of its messages runs', async () => {
    const client = newClient();
    const list = { jsonrpc: '2.0', method: 'tools/list', params: {} };
    const anonymous = await rpc(
      world,
      Array.from({ length: 100 }, (_, i) => ({ ...list, id: i })),
      { 'x-forwarded-for': client },
    );
    expect(anonymous.status).toBe(400);
    const text = await anonymous.text();
    expect(JSON.parse(text)).toEqual({ jsonrpc: '2.0', error: { code: -32600, message: expect.stringMatching(/batch/i) }, id: null });
    expect(text.length).toBeLessThan(300);

    const calls = Array.from({ length: EXTRACT_LIMIT + 2 }, (_, i) => ({
      ...toolCall('extract_persona', { nlBrief: 'Weekend streamers' }),
      id: i,
    }));
    const signedIn = await rpc(world, calls, { authorization: `Bearer ${grant}`, 'x-forwarded-for': client });
    expect(signedIn.status).toBe(400);
    // Nothing of the batch was charged, so nothing of it ran: the client's whole extraction bucket is left.
    for (let i = 0; i < EXTRACT_LIMIT; i++) expect((await extract(client)).structuredContent.code).not.toBe('rate_limited');
  });

  test('each extract_persona call is charged to the extraction bucket, the one REST extraction uses', async () => {
    const client = newClient();
    for (let i = 0; i < EXTRACT_LIMIT; i++) expect((await extract(client)).structuredContent.code).not.toBe('rate_limited');
    const refused = await extract(client);
    expect(refused.isError).toBe(true);
    expect(refused.structuredContent).toMatchObject({ status: 429, code: 'rate_limited', recovery: 'transient' });
    expect(refused.structuredContent.retryAfterSeconds).toBeGreaterThan(0);
    const rest = await fetch(`${world.api.url}/api/v1/personas/extract`, {
      method: 'POST',
      headers: { authorization: `Bearer ${await world.human('acme')}`, 'content-type': 'application/json', 'x-forwarded-for': client },
      body: JSON.stringify({ nlBrief: 'Weekend streamers' }),
    });
    expect(rest.status).toBe(429);
    // Another client's bucket is its own.
    expect((await extract(newClient())).structuredContent.code).not.toBe('rate_limited');
  });

  test('tools/list is made once per process: the same answer for every caller, signed in or not', async () => {
    const client = newClient();
    const ask = async (headers: Record<string, string>) => {
      const res = await rpc(world, { jsonrpc: '2.0', id: 7, method: 'tools/list', params: {} }, { 'x-forwarded-for': client, ...headers });
      expect(res.status).toBe(200);
      return res.text();
    };
    const first = await ask({});
    for (let i = 0; i < 5; i++) expect(await ask({})).toBe(first);
    expect(await ask({ authorization: `Bearer ${grant}` })).toBe(first);
    expect(world.api.deps.agentEndpoint!.toolList.builds).toBe(1);
    expect(JSON.parse(first).result.tools.length).toBeGreaterThan(20);
  });
});
