import { randomUUID } from 'node:crypto';
import { createTestEnv, type TestApi, type TestEnv } from '../support/api';
import { actors, approvedCampaign, approvedLaunch, execute } from '../agent/support';

/**
 * A replay is the first response, byte for byte: the same bytes, not the same JSON in another
 * key order (which a client hashing or signing responses would see as a different answer).
 */
let env: TestEnv;
let api: TestApi;
beforeAll(async () => {
  env = await createTestEnv();
  api = await env.api();
});
afterAll(() => env.close());

const topup = (token: string, key: string, amountMinor: number) =>
  api.fetch('/api/v1/billing/topup/requests', {
    method: 'POST',
    token,
    headers: { 'content-type': 'application/json', 'idempotency-key': key },
    body: JSON.stringify({ amountMinor, currency: 'GBP' }),
  });

/** Status, content type and body bytes: what a client can compare. */
const seen = async (res: Response) => ({
  status: res.status,
  type: res.headers.get('content-type'),
  bytes: Buffer.from(await res.arrayBuffer()).toString('hex'),
});

describe('idempotent replays are byte for byte', () => {
  test('a created resource is replayed with the first response’s exact bytes', async () => {
    const token = await env.issuer.token({ org: 'org-bytes-1', user: 'payer' });
    const key = randomUUID();
    const first = await topup(token, key, 10_000);
    expect(first.status).toBe(201);
    const firstSeen = await seen(first);
    // Keys in the order the handler wrote them, which jsonb would not keep (it sorts by length).
    expect(Object.keys(JSON.parse(Buffer.from(firstSeen.bytes, 'hex').toString()))).toEqual(['request', 'checkoutUrl']);
    for (let i = 0; i < 2; i++) {
      const replay = await topup(token, key, 10_000);
      expect(replay.headers.get('idempotency-replayed')).toBe('true');
      expect(await seen(replay)).toEqual(firstSeen);
    }
  });

  test('a refusal stored for a key is replayed with its exact bytes', async () => {
    const token = await env.issuer.token({ org: 'org-bytes-2', user: 'payer' });
    const key = randomUUID();
    const first = await topup(token, key, 1);
    expect(first.status).toBe(400);
    const firstSeen = await seen(first);
    const replay = await topup(token, key, 1);
    expect(replay.headers.get('idempotency-replayed')).toBe('true');
    expect(await seen(replay)).toEqual(firstSeen);
  });

  test('a governed execution’s receipt is replayed with the first response’s exact bytes', async () => {
    const a = await actors(env, api, 'org-bytes-3');
    const campaignId = await approvedCampaign(api, a.human, 9_000);
    const { stepId, actionDigest } = await approvedLaunch(api, a, campaignId, 12_000);
    const first = await execute(api, a.agent, campaignId, stepId, actionDigest);
    expect(first.status).toBe(202);
    const firstSeen = await seen(first);
    const replay = await execute(api, a.agent, campaignId, stepId, actionDigest);
    expect(replay.headers.get('x-flightdeck-receipt')).toBe('replayed');
    expect(await seen(replay)).toEqual(firstSeen);
  });
});
