import { randomUUID } from 'node:crypto';
import { createTestEnv, json, type TestApi, type TestEnv } from '../support/api';
import { draftCampaign, post } from '../support/bookings';

let env: TestEnv;
let api: TestApi;
beforeAll(async () => {
  env = await createTestEnv();
  api = await env.api({ RATE_LIMIT_MAX: '100000' });
});
afterAll(() => env.close());

interface Session {
  id: string;
  revision: number;
  status: string;
  activeTurnId: string | null;
  messages: unknown[];
  history: unknown[];
  productScope: { product: string; channels: string[] };
  references: Record<string, { id: string }>;
  workflow: string;
  context: Record<string, string>;
}
const count = async () => Number((await env.db('buyer_sessions').count({ n: '*' }))[0]!.n);

describe('POST /api/v1/buyer/sessions', () => {
  test('records the workflow, the product scope and a summary of each referenced resource', async () => {
    const token = await env.issuer.token({ org: 'org-s', user: 'u', agent: 'planner-bot', product: 'flightdeck-ctv' });
    // The person sets the campaign up; their agent keeps the workflow about it.
    const person = await env.issuer.token({ org: 'org-s', user: 'u', product: 'flightdeck-ctv' });
    const { campaignId, planId } = await draftCampaign(api, person, [{ channel: 'ctv', adapterKey: 'sandbox-ctv', budgetMinor: 1000 }]);
    const res = await post(api, token, '/api/v1/buyer/sessions', { workflow: 'brief_to_plan', context: { campaignId, planId } });
    expect(res.status).toBe(201);
    const { session } = await json<{ session: Session }>(res);
    expect(session.id).toMatch(/^[0-9a-f-]{36}$/);
    expect(session).toMatchObject({
      workflow: 'brief_to_plan',
      revision: 1,
      status: 'idle',
      activeTurnId: null,
      messages: [],
      history: [],
      productScope: { product: 'flightdeck-ctv', channels: ['ctv'] },
    });
    expect(session.references.campaign!.id).toBe(campaignId);
    expect(session.references.plan!.id).toBe(planId);
    const empty = await json<{ session: Session }>(await post(api, token, '/api/v1/buyer/sessions', { workflow: 'campaign_review' }));
    expect(empty.session.context).toEqual({});
  });

  test('the stored product scope always has 1..7 channels: the default product stores all seven, an entitlement narrows it', async () => {
    const general = await env.issuer.token({ org: 'org-s7' });
    const all = await json<{ session: Session }>(await post(api, general, '/api/v1/buyer/sessions', { workflow: 'brief_to_plan' }));
    expect(all.session.productScope).toEqual({
      product: 'flightdeck',
      channels: ['ctv', 'audio', 'tv', 'cinema', 'dooh', 'search', 'social'],
    });
    const narrowed = await env.issuer.token({ org: 'org-s7', channels: ['tv', 'audio'] });
    const two = await json<{ session: Session }>(await post(api, narrowed, '/api/v1/buyer/sessions', { workflow: 'brief_to_plan' }));
    expect(two.session.productScope.channels).toEqual(['audio', 'tv']);
    const stored = await env.db('buyer_sessions').where({ advertiser_id: 'org-s7' }).select('product_scope');
    for (const row of stored) expect((row.product_scope as { channels: string[] }).channels.length).toBeGreaterThanOrEqual(1);
  });

  test('an entitlement that leaves no channel of the product is refused (403) and stores no session', async () => {
    const token = await env.issuer.token({ org: 'org-s8', product: 'flightdeck-ctv', channels: ['dooh'] });
    const before = await count();
    const res = await post(api, token, '/api/v1/buyer/sessions', { workflow: 'brief_to_plan' });
    expect(res.status).toBe(403);
    expect(await json(res)).toMatchObject({ code: 'no_channels' });
    expect(await count()).toBe(before);
  });

  test("context references that are not the caller's are 404 and create nothing", async () => {
    const mine = await env.issuer.token({ org: 'org-s2' });
    const { campaignId } = await draftCampaign(api, mine, [{ channel: 'tv', adapterKey: 'sandbox-tv', budgetMinor: 1000 }]);
    const stranger = await env.issuer.token({ org: 'org-s3' });
    const before = await count();
    for (const context of [
      { campaignId },
      { planId: randomUUID() },
      { personaId: randomUUID() },
      { creativeId: 'cr-1' },
      { campaignId: 'not-a-uuid' },
    ]) {
      expect((await post(api, stranger, '/api/v1/buyer/sessions', { workflow: 'brief_to_plan', context })).status).toBe(404);
    }
    expect(await count()).toBe(before);
  });

  test.each([
    ['an unknown workflow', { workflow: 'buy_everything' }],
    ['a missing workflow', { context: {} }],
    ['an unknown context key', { workflow: 'brief_to_plan', context: { bookingId: 'x' } }],
    ['a context id over 128 characters', { workflow: 'brief_to_plan', context: { campaignId: 'c'.repeat(129) } }],
    ['an empty context id', { workflow: 'brief_to_plan', context: { campaignId: '' } }],
    ['an unknown field', { workflow: 'brief_to_plan', budget: 5 }],
  ])('%s is a 400 and creates nothing', async (_n, body) => {
    const token = await env.issuer.token({ org: 'org-s4' });
    const before = await count();
    expect((await post(api, token, '/api/v1/buyer/sessions', body)).status).toBe(400);
    expect(await count()).toBe(before);
  });
});

describe('session messages', () => {
  async function session(org = 'org-m') {
    const token = await env.issuer.token({ org });
    const { session: s } = await json<{ session: Session }>(
      await post(api, token, '/api/v1/buyer/sessions', { workflow: 'creative_direction' }),
    );
    return { token, id: s.id };
  }
  const say = (token: string, id: string, body: Record<string, unknown>) => post(api, token, `/api/v1/buyer/sessions/${id}/messages`, body);

  test('a user message opens a turn and the matching assistant answer closes it; each write moves the revision', async () => {
    const { token, id } = await session();
    const turn = randomUUID();
    const asked = await json<{ session: Session }>(
      await say(token, id, { revision: 1, role: 'user', message: 'Plan a CTV burst', requestId: turn }),
    );
    expect(asked.session).toMatchObject({ revision: 2, status: 'running', activeTurnId: turn });
    const answered = await json<{ session: Session }>(
      await say(token, id, {
        revision: 2,
        role: 'assistant',
        message: 'Here is a plan',
        requestId: turn,
        history: [{ tool: 'plan', ok: true }],
      }),
    );
    expect(answered.session).toMatchObject({ revision: 3, status: 'idle', activeTurnId: null, history: [{ tool: 'plan', ok: true }] });
    expect(answered.session.messages).toHaveLength(2);
    expect((await json<{ session: Session }>(await api.fetch(`/api/v1/buyer/sessions/${id}`, { token }))).session.revision).toBe(3);
  });

  test('a stale revision is a 409 and changes nothing, also when two writers race', async () => {
    const { token, id } = await session('org-race');
    const results = await Promise.all(
      Array.from({ length: 5 }, () => say(token, id, { revision: 1, role: 'user', message: 'hello', requestId: randomUUID() })),
    );
    expect(results.map((r) => r.status).sort()).toEqual([200, 409, 409, 409, 409]);
    const s = (await json<{ session: Session }>(await api.fetch(`/api/v1/buyer/sessions/${id}`, { token }))).session;
    expect(s.messages).toHaveLength(1);
    expect(s.revision).toBe(2);
  });

  test('at most 40 messages and 128 history entries', async () => {
    const { token, id } = await session('org-full');
    let revision = 1;
    for (let i = 0; i < 20; i++) {
      const turn = randomUUID();
      expect((await say(token, id, { revision: revision++, role: 'user', message: `q${i}`, requestId: turn })).status).toBe(200);
      expect(
        (
          await say(token, id, {
            revision: revision++,
            role: 'assistant',
            message: `a${i}`,
            requestId: turn,
            history: i < 16 ? Array.from({ length: 8 }, () => ({ i })) : [],
          })
        ).status,
      ).toBe(200);
    }
    const full = await say(token, id, { revision, role: 'user', message: 'one more', requestId: randomUUID() });
    expect(full.status).toBe(409);
    expect(await json(full)).toMatchObject({ code: 'session_full' });
    const s = (await json<{ session: Session }>(await api.fetch(`/api/v1/buyer/sessions/${id}`, { token }))).session;
    expect(s.messages).toHaveLength(40);
    expect(s.history).toHaveLength(128);

    const other = await session('org-full-2');
    expect(
      (
        await say(other.token, other.id, {
          revision: 1,
          role: 'user',
          message: 'x',
          requestId: randomUUID(),
          history: Array.from({ length: 129 }, () => ({})),
        })
      ).status,
    ).toBe(400);
  });

  test('turn rules: no second user turn while one runs, and the assistant must answer the running turn', async () => {
    const { token, id } = await session('org-turns');
    await say(token, id, { revision: 1, role: 'user', message: 'q', requestId: randomUUID() });
    expect(await json(await say(token, id, { revision: 2, role: 'user', message: 'q2', requestId: randomUUID() }))).toMatchObject({
      code: 'turn_in_progress',
    });
    expect(await json(await say(token, id, { revision: 2, role: 'assistant', message: 'a', requestId: randomUUID() }))).toMatchObject({
      code: 'turn_mismatch',
    });
  });

  test("bad bodies are 400; another tenant's session is 404", async () => {
    const { token, id } = await session('org-bad');
    for (const bad of [
      { revision: 0, role: 'user', message: 'x', requestId: randomUUID() },
      { revision: 1, role: 'system', message: 'x', requestId: randomUUID() },
      { revision: 1, role: 'user', message: '', requestId: randomUUID() },
      { revision: 1, role: 'user', message: 'x', requestId: 'r1' },
      { revision: 1, role: 'user', message: 'x', requestId: randomUUID(), extra: 1 },
    ]) {
      expect((await say(token, id, bad)).status).toBe(400);
    }
    const stranger = await env.issuer.token({ org: 'org-bad-2' });
    expect((await api.fetch(`/api/v1/buyer/sessions/${id}`, { token: stranger })).status).toBe(404);
    expect((await say(stranger, id, { revision: 1, role: 'user', message: 'x', requestId: randomUUID() })).status).toBe(404);
    expect((await json<{ session: Session }>(await api.fetch(`/api/v1/buyer/sessions/${id}`, { token }))).session.revision).toBe(1);
  });
});
