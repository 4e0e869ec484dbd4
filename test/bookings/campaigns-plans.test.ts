import { createHash } from 'node:crypto';
import { canonicalize } from 'json-canonicalize';
import { createTestEnv, json, type TestApi, type TestEnv } from '../support/api';
import { approve, draftCampaign, post } from '../support/bookings';

let env: TestEnv;
let api: TestApi;
let token: string;
beforeAll(async () => {
  env = await createTestEnv();
  api = await env.api();
  token = await env.issuer.token({ org: 'org-a', user: 'buyer-a' });
});
afterAll(() => env.close());

const campaign = (over: Record<string, unknown> = {}) => ({
  name: 'Summer',
  clientName: 'Acme Drinks',
  startDate: '2027-06-01',
  endDate: '2027-06-30',
  budgetMinor: 500_000,
  maximumCommitmentMinor: 550_000,
  channels: ['ctv', 'dooh'],
  ...over,
});
const count = async (table: string) => Number((await env.db(table).count({ n: '*' }))[0]!.n);

describe('campaigns', () => {
  test('a campaign is created with its money in minor units and read back', async () => {
    const res = await post(api, token, '/api/v1/campaigns', campaign());
    expect(res.status).toBe(201);
    const { campaign: c } = await json<{ campaign: Record<string, unknown> }>(res);
    expect(c).toMatchObject({
      name: 'Summer',
      clientName: 'Acme Drinks',
      budgetMinor: 500_000,
      maximumCommitmentMinor: 550_000,
      currency: 'GBP',
      channels: ['ctv', 'dooh'],
      executionMode: 'sandbox',
      status: 'draft',
    });
    const read = await json<{ campaign: { id: string }; plan: null }>(await api.fetch(`/api/v1/campaigns/${c.id}`, { token }));
    expect(read.campaign.id).toBe(c.id);
    expect(read.plan).toBeNull();
    const list = await json<{ campaigns: Array<{ id: string }> }>(await api.fetch('/api/v1/campaigns', { token }));
    expect(list.campaigns.map((x) => x.id)).toContain(c.id);
  });

  test.each([
    ['an unknown field', { extra: 1 }],
    ['an empty name', { name: '' }],
    ['a fractional budget', { budgetMinor: 10.5 }],
    ['a negative budget', { budgetMinor: -1 }],
    ['a budget beyond safe integers', { budgetMinor: 2 ** 53 }],
    ['a commitment below the budget', { maximumCommitmentMinor: 1 }],
    ['an end before the start', { endDate: '2027-05-01' }],
    ['an impossible date', { startDate: '2027-02-30' }],
    ['an unknown channel', { channels: ['radio'] }],
    ['no channels', { channels: [] }],
    ['a repeated channel', { channels: ['ctv', 'ctv'] }],
    ['an unknown execution mode', { executionMode: 'paper' }],
  ])('%s is a 400 and creates nothing', async (_name, over) => {
    const before = await count('campaigns');
    const res = await post(api, token, '/api/v1/campaigns', campaign(over));
    expect(res.status).toBe(400);
    expect(res.headers.get('content-type')).toMatch(/problem\+json/);
    expect(await count('campaigns')).toBe(before);
  });

  test('channels outside the caller product are refused with 403 and nothing is created', async () => {
    const before = await count('campaigns');
    const doohOnly = await env.issuer.token({ org: 'org-a', product: 'flightdeck-dooh' });
    const res = await post(api, doohOnly, '/api/v1/campaigns', campaign({ channels: ['dooh', 'tv'] }));
    expect(res.status).toBe(403);
    expect(await json(res)).toMatchObject({ code: 'channel_not_entitled' });
    expect(await count('campaigns')).toBe(before);
  });

  test('another tenant, and a caller whose product does not cover the campaign, get the same 404 as a missing id', async () => {
    const { campaign: c } = await json<{ campaign: { id: string } }>(await post(api, token, '/api/v1/campaigns', campaign()));
    const missing = await api.fetch(`/api/v1/campaigns/00000000-0000-4000-8000-000000000000`, { token });
    const strip = (b: Record<string, unknown>) => ({ ...b, requestId: undefined });
    const missingBody = strip(await json(missing));
    for (const other of [await env.issuer.token({ org: 'org-b' }), await env.issuer.token({ org: 'org-a', product: 'flightdeck-dooh' })]) {
      const res = await api.fetch(`/api/v1/campaigns/${c.id}`, { token: other });
      expect(res.status).toBe(404);
      expect(strip(await json(res))).toEqual(missingBody);
      expect(
        (
          await api.fetch(`/api/v1/campaigns/${c.id}/plan`, {
            method: 'PUT',
            token: other,
            headers: { 'content-type': 'application/json' },
            body: JSON.stringify({ lines: [{ channel: 'ctv', adapterKey: 'sandbox-ctv', budgetMinor: 1 }] }),
          })
        ).status,
      ).toBe(404);
    }
    expect((await api.fetch('/api/v1/campaigns/not-a-uuid', { token })).status).toBe(404);
  });

  test('list bounds: limit must be 1..100', async () => {
    expect((await api.fetch('/api/v1/campaigns?limit=0', { token })).status).toBe(400);
    expect((await api.fetch('/api/v1/campaigns?limit=101', { token })).status).toBe(400);
    expect((await api.fetch('/api/v1/campaigns?sort=name', { token })).status).toBe(400);
  });
});

describe('plans', () => {
  test('a plan is created, replaced with expectedVersion, and read by id (spec 23)', async () => {
    const { campaignId, planId, planVersion } = await draftCampaign(api, token, [
      { channel: 'ctv', adapterKey: 'sandbox-ctv', budgetMinor: 1000 },
    ]);
    expect(planVersion).toBe(1);
    const replaced = await post(
      api,
      token,
      `/api/v1/campaigns/${campaignId}/plan`,
      { expectedVersion: 1, lines: [{ channel: 'ctv', adapterKey: 'manual', budgetMinor: 900 }] },
      'PUT',
    );
    expect(replaced.status).toBe(200);
    const read = await json<{ plan: Record<string, unknown> }>(await api.fetch(`/api/v1/plans/${planId}`, { token }));
    expect(Object.keys(read)).toEqual(['plan']);
    expect(read.plan).toMatchObject({
      id: planId,
      campaignId,
      version: 2,
      status: 'draft',
      totalBudgetMinor: 900,
      lines: [expect.objectContaining({ channel: 'ctv', adapterKey: 'manual', budgetMinor: 900, creativeIds: [] })],
    });
  });

  test('a stale expectedVersion is a 409 and the plan is unchanged', async () => {
    const { campaignId, planId } = await draftCampaign(api, token, [{ channel: 'ctv', adapterKey: 'sandbox-ctv', budgetMinor: 1000 }]);
    const res = await post(
      api,
      token,
      `/api/v1/campaigns/${campaignId}/plan`,
      { expectedVersion: 7, lines: [{ channel: 'ctv', adapterKey: 'manual', budgetMinor: 5 }] },
      'PUT',
    );
    expect(res.status).toBe(409);
    expect(await json(res)).toMatchObject({ code: 'version_conflict', recovery: 'correctable' });
    const { plan } = await json<{ plan: { version: number; lines: Array<{ adapterKey: string }> } }>(
      await api.fetch(`/api/v1/plans/${planId}`, { token }),
    );
    expect(plan.version).toBe(1);
    expect(plan.lines[0]!.adapterKey).toBe('sandbox-ctv');
  });

  test.each([
    ['a channel the campaign does not have', [{ channel: 'tv', adapterKey: 'sandbox-tv', budgetMinor: 1 }], 400, 'channel_not_in_campaign'],
    ['an unknown adapter', [{ channel: 'ctv', adapterKey: 'nobody', budgetMinor: 1 }], 400, 'unknown_adapter'],
    [
      'an adapter that does not book the channel',
      [{ channel: 'ctv', adapterKey: 'sandbox-dooh', budgetMinor: 1 }],
      422,
      'adapter_channel_unsupported',
    ],
    ['a live adapter on a sandbox campaign', [{ channel: 'ctv', adapterKey: 'live-ctv', budgetMinor: 1 }], 422, 'adapter_mode_unsupported'],
    ['lines over the campaign budget', [{ channel: 'ctv', adapterKey: 'sandbox-ctv', budgetMinor: 500_001 }], 400, 'plan_over_budget'],
    [
      'a creative that does not exist',
      [{ channel: 'ctv', adapterKey: 'sandbox-ctv', budgetMinor: 1, creativeIds: ['cr-1'] }],
      404,
      'not_found',
    ],
    ['an unknown line field', [{ channel: 'ctv', adapterKey: 'sandbox-ctv', budgetMinor: 1, cpm: 3 }], 400, 'validation_failed'],
    ['no lines', [], 400, 'validation_failed'],
  ])('%s is refused and nothing is stored', async (_name, lines, status, code) => {
    const { campaign: c } = await json<{ campaign: { id: string } }>(await post(api, token, '/api/v1/campaigns', campaign()));
    const res = await post(api, token, `/api/v1/campaigns/${c.id}/plan`, { lines }, 'PUT');
    expect(res.status).toBe(status);
    expect(await json(res)).toMatchObject({ code });
    expect(await env.db('plans').where({ campaign_id: c.id }).count({ n: '*' })).toEqual([{ n: '0' }]);
  });

  test('approval records the snapshot and its digest: RFC 8785 canonical JSON hashed with SHA-256', async () => {
    const { campaignId, planId } = await draftCampaign(api, token, [{ channel: 'ctv', adapterKey: 'sandbox-ctv', budgetMinor: 1000 }]);
    const plan = await approve(api, token, campaignId, 1);
    const row = await env.db('plans').where({ id: planId }).first();
    const independent = createHash('sha256').update(canonicalize(row.approved_snapshot)).digest('hex');
    expect(plan.approvedDigest).toBe(independent);
    expect(row.approved_snapshot.campaign).toMatchObject({ id: campaignId, budgetMinor: 1000, maximumCommitmentMinor: 1000 });
    expect(await json(await api.fetch(`/api/v1/campaigns/${campaignId}`, { token }))).toMatchObject({
      campaign: { status: 'approved' },
      plan: { status: 'approved', approvalCurrent: true },
    });
  });

  test('a delegated agent cannot approve a plan (403) and the plan stays a draft', async () => {
    const { campaignId, planId } = await draftCampaign(api, token, [{ channel: 'ctv', adapterKey: 'sandbox-ctv', budgetMinor: 1000 }]);
    const agent = await env.issuer.token({ org: 'org-a', user: 'buyer-a', agent: 'planner-bot' });
    const res = await post(api, agent, `/api/v1/campaigns/${campaignId}/plan/approve`, { expectedVersion: 1 });
    expect(res.status).toBe(403);
    expect((await env.db('plans').where({ id: planId }).first()).status).toBe('draft');
  });

  test('approving a version other than the current one is a 409', async () => {
    const { campaignId } = await draftCampaign(api, token, [{ channel: 'ctv', adapterKey: 'sandbox-ctv', budgetMinor: 1000 }]);
    const res = await post(api, token, `/api/v1/campaigns/${campaignId}/plan/approve`, { expectedVersion: 2 });
    expect(res.status).toBe(409);
    expect((await post(api, token, `/api/v1/campaigns/${campaignId}/plan/approve`, { expectedVersion: 1, note: 'x' })).status).toBe(400);
  });

  test('replacing an approved plan voids the approval', async () => {
    const { campaignId, planId } = await draftCampaign(api, token, [{ channel: 'ctv', adapterKey: 'sandbox-ctv', budgetMinor: 1000 }]);
    await approve(api, token, campaignId, 1);
    const replaced = await post(
      api,
      token,
      `/api/v1/campaigns/${campaignId}/plan`,
      { expectedVersion: 1, lines: [{ channel: 'ctv', adapterKey: 'sandbox-ctv', budgetMinor: 500 }] },
      'PUT',
    );
    expect(replaced.status).toBe(200);
    const { plan } = await json<{ plan: Record<string, unknown> }>(await api.fetch(`/api/v1/plans/${planId}`, { token }));
    expect(plan).toMatchObject({ status: 'draft', approvedDigest: null, approvalCurrent: false, version: 2 });
  });

  test("a running campaign's plan is not replaced: 409 plan_locked_in_flight says to amend, and the approval and plan stay as launched", async () => {
    const lines = [{ channel: 'ctv', adapterKey: 'sandbox-ctv', budgetMinor: 1000 }];
    const { campaignId, planId } = await draftCampaign(api, token, lines);
    await approve(api, token, campaignId, 1);
    expect((await post(api, token, `/api/v1/campaigns/${campaignId}/launch`)).status).toBe(202);
    const before = await env.db('plans').where({ id: planId }).first();
    const res = await post(
      api,
      token,
      `/api/v1/campaigns/${campaignId}/plan`,
      { expectedVersion: 1, lines: [{ ...lines[0], budgetMinor: 900 }] },
      'PUT',
    );
    expect(res.status).toBe(409);
    const problem = await json<{ code: string; detail: string; recovery: string }>(res);
    expect(problem).toMatchObject({ code: 'plan_locked_in_flight', recovery: 'terminal' });
    expect(problem.detail).toContain(`/api/v1/campaigns/${campaignId}/amendments`);
    expect(await env.db('plans').where({ id: planId }).first()).toEqual(before);
    expect((await env.db('campaigns').where({ id: campaignId }).first()).status).toBe('booked');
  });
});
