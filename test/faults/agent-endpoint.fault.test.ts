import { randomUUID } from 'node:crypto';
import { createTestEnv, json, type TestEnv } from '../support/api';
import { authorizationCode, redeemCode, refreshGrant, rpc, startMcpWorld, toolCall, type McpWorld } from '../mcp/support';
import { figure } from './support/input-report';

/**
 * Hostile use of the agent endpoint and its development authorization server: one code or
 * refresh token redeemed by many requests at once, JSON-RPC batches of every shape, arguments
 * nested far past the body limit, an extraction flood through tools, and the service's own
 * address spent. Clients say where they come from with X-Forwarded-For (loopback proxies are
 * trusted here), so each flood has a bucket of its own.
 */
const RACE = 50;
const EXTRACT_LIMIT = 5;
let env: TestEnv;
let world: McpWorld;
let grant: string;
beforeAll(async () => {
  env = await createTestEnv({ rateLimits: 'default' });
  world = await startMcpWorld(env, {
    RATE_LIMIT_MAX: '1000',
    RATE_LIMIT_EXTRACT_MAX: String(EXTRACT_LIMIT),
    PERSONA_EXTRACT_TIMEOUT_MS: '100',
    TRUST_PROXY: 'loopback',
  });
  grant = await issue();
}, 120_000);
afterAll(() => env.close());

let clients = 0;
const newClient = () => `198.51.100.${++clients}`;
async function issue() {
  const { code, verifier } = await authorizationCode(world, { user: 'alice', workspace: 'acme' });
  return (await redeemCode(world, code, verifier)).body.access_token!;
}
const grantStored = async (grantId: string) =>
  (await env.db('oauth_artifacts').where({ model: 'Grant', id: grantId }).first()) !== undefined;
const errorsLogged = () => world.api.logs.filter((l) => Number(l.level) >= 50).length;

describe('the authorization server under races', () => {
  test(`${RACE} redemptions of one code at once: one token set at most, the rest invalid_grant, the grant revoked`, async () => {
    const { code, verifier } = await authorizationCode(world, { user: 'alice', workspace: 'acme' });
    const grantId = String((await env.db('oauth_artifacts').where({ model: 'AuthorizationCode', id: code }).first('grant_id')).grant_id);
    const answers = await Promise.all(Array.from({ length: RACE }, () => redeemCode(world, code, verifier)));
    const won = answers.filter((a) => a.status === 200);
    const other = answers.filter((a) => a.status !== 200 && a.body.error !== 'invalid_grant');
    const refused = won.length ? await refreshGrant(world, won[0]!.body.refresh_token!) : null;
    figure(
      `code race: ${RACE} redemptions, ${won.length} token set(s), ${RACE - won.length - other.length} invalid_grant, ${other.length} other`,
    );
    expect(won.length).toBeLessThanOrEqual(1);
    expect(other).toEqual([]);
    expect(await grantStored(grantId)).toBe(false);
    if (refused) expect(refused.body.error).toBe('invalid_grant');
  });

  test(`${RACE} refreshes with one refresh token at once: one new chain at most, then none`, async () => {
    const { code, verifier } = await authorizationCode(world, { user: 'alice', workspace: 'acme' });
    const first = await redeemCode(world, code, verifier);
    const answers = await Promise.all(Array.from({ length: RACE }, () => refreshGrant(world, first.body.refresh_token!)));
    const won = answers.filter((a) => a.status === 200);
    const chains = await Promise.all(won.map(async (w) => (await refreshGrant(world, w.body.refresh_token!)).status === 200));
    figure(`refresh race: ${RACE} refreshes, ${won.length} new chain(s), ${chains.filter(Boolean).length} still alive after`);
    expect(won.length).toBeLessThanOrEqual(1);
    expect(chains.filter(Boolean)).toEqual([]);
  });
});

describe('hostile JSON-RPC at /mcp', () => {
  const extract = (client: string) =>
    rpc(world, toolCall('extract_persona', { nlBrief: 'Commuters who listen to podcasts' }), {
      authorization: `Bearer ${grant}`,
      'x-forwarded-for': client,
    }).then((r) => json<{ result?: { structuredContent?: { code?: string } } }>(r));

  test('batches of every shape are one small JSON-RPC error, with or without a grant, and none of their messages runs', async () => {
    const client = newClient();
    const evidence = async () => Number((await env.db('agent_evidence').count({ n: '*' }))[0]!.n);
    const before = await evidence();
    const message = (i: number) =>
      [
        { jsonrpc: '2.0', id: i, method: 'tools/list', params: {} },
        { ...toolCall('extract_persona', { nlBrief: 'Commuters' }), id: i },
        { ...toolCall('record_evidence', { id: randomUUID(), kind: 'k', source: 's', content: {} }), id: i },
        { jsonrpc: '2.0', method: 'notifications/initialized' },
      ][i % 4]!;
    const shapes = [
      [],
      [message(0)],
      Array.from({ length: 100 }, (_, i) => message(i)),
      Array.from({ length: 1000 }, (_, i) => message(i)),
    ];
    const statuses: number[] = [];
    for (const shape of shapes) {
      for (const headers of [{}, { authorization: `Bearer ${grant}` }] as Array<Record<string, string>>) {
        const res = await rpc(world, shape, { 'x-forwarded-for': client, ...headers });
        statuses.push(res.status);
        const text = await res.text();
        expect(res.status).toBe(400);
        expect(JSON.parse(text)).toMatchObject({ jsonrpc: '2.0', error: { code: -32600 }, id: null });
        expect(text.length).toBeLessThan(300);
      }
    }
    // Not one extraction was charged, and no evidence was recorded.
    const left = await Promise.all(Array.from({ length: EXTRACT_LIMIT }, () => extract(client)));
    figure(`batches: ${statuses.length} sent (0 to 1,000 messages), statuses ${[...new Set(statuses)].join(', ')}`);
    expect(left.filter((r) => r.result?.structuredContent?.code === 'rate_limited')).toEqual([]);
    expect(await evidence()).toBe(before);
  });

  test('arguments and envelopes nested far past the body limit are refused without a stack overflow or an error logged', async () => {
    const errorsBefore = errorsLogged();
    const deep = (levels: number, kind: 'array' | 'object') =>
      kind === 'array' ? '['.repeat(levels) + ']'.repeat(levels) : '{"a":'.repeat(levels) + '1' + '}'.repeat(levels);
    const statuses: number[] = [];
    for (const levels of [65, 1_000, 10_000, 100_000]) {
      for (const kind of ['array', 'object'] as const) {
        for (const where of ['arguments', 'meta', 'id']) {
          const value = deep(levels, kind);
          const body =
            where === 'arguments'
              ? `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"record_evidence","arguments":{"id":"${randomUUID()}","kind":"k","source":"s","content":{"x":${value}}}}}`
              : where === 'meta'
                ? `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":${value}}}`
                : `{"jsonrpc":"2.0","id":${value},"method":"tools/list","params":{}}`;
          const res = await fetch(world.resourceUrl, {
            method: 'POST',
            headers: {
              'content-type': 'application/json',
              accept: 'application/json, text/event-stream',
              authorization: `Bearer ${grant}`,
            },
            body,
          });
          statuses.push(res.status);
          await res.arrayBuffer();
        }
      }
    }
    figure(
      `deep messages: ${statuses.length} sent (65 to 100,000 levels), statuses ${[...new Set(statuses)].join(', ')}, ${errorsLogged() - errorsBefore} errors logged`,
    );
    expect(statuses.filter((s) => s >= 500)).toEqual([]);
    expect(statuses.filter((s) => s === 200)).toEqual([]);
    expect(errorsLogged()).toBe(errorsBefore);
    expect(await env.db('agent_evidence').count({ n: '*' })).toEqual([{ n: '0' }]);
  });

  test(`200 extract_persona calls at once from one client: ${EXTRACT_LIMIT} run, the rest are rate limited`, async () => {
    const client = newClient();
    const answers = await Promise.all(Array.from({ length: 200 }, () => extract(client)));
    const limited = answers.filter((r) => r.result?.structuredContent?.code === 'rate_limited').length;
    figure(`extraction flood through /mcp: 200 calls, ${200 - limited} charged and run, ${limited} rate limited`);
    expect(200 - limited).toBe(EXTRACT_LIMIT);
  });

  test('with the service’s own address spent, agents still connect: the authorization server is reached in process', async () => {
    const fresh = await issue();
    let spent = 0;
    while ((await fetch(`${world.api.url}/nowhere`)).status !== 429) spent++;
    const res = await rpc(world, toolCall('list_personas'), { authorization: `Bearer ${fresh}`, 'x-forwarded-for': newClient() });
    figure(`own address spent after ${spent} requests: a new grant's first call answered ${res.status}`);
    expect(res.status).toBe(200);
  });
});
