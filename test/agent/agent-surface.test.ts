import { createHash } from 'node:crypto';
import { canonicalize } from 'json-canonicalize';
import { createTestEnv, json, type TestApi, type TestEnv } from '../support/api';
import { post } from '../support/bookings';
import { actors, approvedCampaign, approvedLaunch, execute, prepare, type Prepared } from './support';

let env: TestEnv;
let api: TestApi;
beforeAll(async () => {
  env = await createTestEnv();
  api = await env.api();
});
afterAll(() => env.close());

const count = async (table: string, where: Record<string, unknown> = {}) =>
  Number((await env.db(table).where(where).count({ n: '*' }))[0]!.n);

describe('GET /api/v1/agent/actions', () => {
  test('publishes the contracts with routes, JSON Schema parameters and budget policies', async () => {
    const a = await actors(env, api, 'org-contracts');
    const { actions } = await json<{
      actions: Array<{
        name: string;
        route: string;
        budgetPolicy: string;
        parameters: { required?: string[]; additionalProperties?: boolean };
      }>;
    }>(await api.fetch('/api/v1/agent/actions', { token: a.agent }));
    expect(actions.map((x) => [x.name, x.route, x.budgetPolicy])).toEqual([
      ['campaign.launch', '/api/v1/campaigns/{campaignId}/launch', 'campaign-commitment'],
      ['campaign.pause', '/api/v1/campaigns/{campaignId}/pause', 'zero'],
      ['campaign.resume', '/api/v1/campaigns/{campaignId}/resume', 'zero'],
      ['campaign.stop', '/api/v1/campaigns/{campaignId}/stop', 'zero'],
      ['campaign.amend', '/api/v1/campaigns/{campaignId}/amendments', 'incremental-commitment'],
      ['campaign.cap', '/api/v1/campaigns/{campaignId}/daily-caps', 'zero'],
      ['line.pause', '/api/v1/bookings/{bookingId}/lines/{lineId}/pause', 'zero'],
      ['line.resume', '/api/v1/bookings/{bookingId}/lines/{lineId}/resume', 'zero'],
      ['creative.submit', '/api/v1/creatives/{creativeId}/submit', 'zero'],
      ['audience.sync', '/api/v1/campaigns/{campaignId}/sync-audience', 'zero'],
      ['optimization.reject', '/api/v1/optimizations/{optimizationId}/reject', 'zero'],
      ['study.draft', '/api/v1/brand-lift-studies/{studyId}/draft', 'study-commitment'],
      ['outcomes.import', '/api/v1/campaigns/{campaignId}/outcomes', 'zero'],
    ]);
    expect(actions[0]!.parameters).toMatchObject({ type: 'object', required: ['campaignId'], additionalProperties: false });
  });
});

describe('POST /api/v1/agent/actions/prepare', () => {
  test('digests are stable across key order and include normalised defaults', async () => {
    const a = await actors(env, api, 'org-stable');
    const campaignId = await approvedCampaign(api, a.human);
    const one = {
      campaignId,
      exposedOn: ['ctv'],
      channel: 'ctv',
      purpose: 'inclusion',
      adapterKey: 'sandbox-ctv',
      executionMode: 'sandbox',
    };
    const reordered = {
      executionMode: 'sandbox',
      adapterKey: 'sandbox-ctv',
      purpose: 'inclusion',
      channel: 'ctv',
      exposedOn: ['ctv'],
      campaignId,
      notExposedOn: [],
    };
    const d1 = (await json<Prepared>(await prepare(api, a.agent, 'audience.sync', one, 0))).actionDigest;
    const d2 = (await json<Prepared>(await prepare(api, a.agent, 'audience.sync', reordered, 0))).actionDigest;
    expect(d1).toBe(d2);
    const expected = createHash('sha256')
      .update(canonicalize({ name: 'audience.sync', parameters: { ...one, notExposedOn: [] }, budgetMinor: 0, currency: 'GBP' }))
      .digest('hex');
    expect(d1).toBe(expected);
  });

  test('money is the server figure: a different budgetMinor or currency is refused (409), nothing is recorded', async () => {
    const a = await actors(env, api, 'org-money');
    const campaignId = await approvedCampaign(api, a.human);
    const before = await count('agent_approvals');
    for (const [budget, currency] of [
      [14_999, 'GBP'],
      [15_000, 'EUR'],
      [0, 'GBP'],
    ] as const) {
      const res = await prepare(api, a.agent, 'campaign.launch', { campaignId }, budget, currency);
      expect(res.status).toBe(409);
      expect(await json(res)).toMatchObject({ code: 'commitment_mismatch' });
    }
    expect(await count('agent_approvals')).toBe(before);
  });

  test('the mandate bounds what an agent may prepare: over the ceiling, an action not allowed, or no mandate at all (403)', async () => {
    const a = await actors(env, api, 'org-mandate', { allowedActions: ['campaign.launch'], budgetCeilingMinor: 14_999, currency: 'GBP' });
    const campaignId = await approvedCampaign(api, a.human);
    const over = await prepare(api, a.agent, 'campaign.launch', { campaignId }, 15_000);
    expect(over.status).toBe(403);
    expect(await json(over)).toMatchObject({ code: 'mandate_budget_exceeded' });
    const sync = {
      campaignId,
      exposedOn: ['ctv'],
      channel: 'ctv',
      purpose: 'inclusion',
      adapterKey: 'sandbox-ctv',
      executionMode: 'sandbox',
    };
    expect(await json(await prepare(api, a.agent, 'audience.sync', sync, 0))).toMatchObject({ code: 'mandate_action_not_allowed' });
    const stranger = await env.issuer.token({ org: 'org-mandate', user: 'x', agent: 'unknown-bot' });
    expect(await json(await prepare(api, stranger, 'campaign.launch', { campaignId }, 15_000))).toMatchObject({ code: 'mandate_missing' });
    expect(await count('agent_approvals', { advertiser_id: 'org-mandate' })).toBe(0);
  });

  test.each([
    ['an unknown field', { name: 'campaign.launch', parameters: {}, budgetMinor: 0, currency: 'GBP', extra: 1 }],
    ['an empty name', { name: '', parameters: {}, budgetMinor: 0, currency: 'GBP' }],
    ['a name over 120 characters', { name: 'x'.repeat(121), parameters: {}, budgetMinor: 0, currency: 'GBP' }],
    ['budgetMinor over 1900000000', { name: 'campaign.launch', parameters: {}, budgetMinor: 1_900_000_001, currency: 'GBP' }],
    ['a negative budgetMinor', { name: 'campaign.launch', parameters: {}, budgetMinor: -1, currency: 'GBP' }],
    ['an unsupported currency', { name: 'campaign.launch', parameters: {}, budgetMinor: 0, currency: 'JPY' }],
    ['parameters that are not an object', { name: 'campaign.launch', parameters: [], budgetMinor: 0, currency: 'GBP' }],
    ['a missing field', { name: 'campaign.launch', parameters: {}, budgetMinor: 0 }],
    ['an unknown action', { name: 'campaign.delete', parameters: {}, budgetMinor: 0, currency: 'GBP' }],
    ['parameters outside the contract', { name: 'campaign.launch', parameters: { campaignId: 'nope' }, budgetMinor: 0, currency: 'GBP' }],
    [
      'an extra parameter',
      {
        name: 'campaign.launch',
        parameters: { campaignId: '00000000-0000-4000-8000-000000000000', force: true },
        budgetMinor: 0,
        currency: 'GBP',
      },
    ],
  ])('%s is a 400 and records nothing', async (_n, body) => {
    const a = await actors(env, api, 'org-bounds');
    const before = await count('agent_runs');
    const res = await post(api, a.agent, '/api/v1/agent/actions/prepare', body);
    expect(res.status).toBe(400);
    expect(await count('agent_runs')).toBe(before);
  });

  test("another tenant's campaign is a 404", async () => {
    const a = await actors(env, api, 'org-mine');
    const b = await actors(env, api, 'org-yours');
    const theirs = await approvedCampaign(api, b.human);
    expect((await prepare(api, a.agent, 'campaign.launch', { campaignId: theirs }, 15_000)).status).toBe(404);
  });
});

describe('approval and abandonment', () => {
  test('agents cannot approve or abandon, and humans need agent:approve (403)', async () => {
    const a = await actors(env, api, 'org-deciders');
    const campaignId = await approvedCampaign(api, a.human);
    const p = await json<Prepared>(await prepare(api, a.agent, 'campaign.launch', { campaignId }, 15_000));
    const plain = await env.issuer.token({ org: 'org-deciders', user: 'viewer' });
    for (const token of [a.agent, plain]) {
      expect(
        (await post(api, token, `/api/v1/agent/approvals/${p.approvalId}/approve`, { expectedActionDigest: p.actionDigest })).status,
      ).toBe(403);
      expect(
        (await post(api, token, `/api/v1/agent/approvals/${p.approvalId}/abandon`, { expectedActionDigest: p.actionDigest, note: 'no' }))
          .status,
      ).toBe(403);
    }
    expect(await count('agent_steps', { approval_id: p.approvalId, kind: 'execute' })).toBe(0);
  });

  test('approval needs the exact digest and is used once', async () => {
    const a = await actors(env, api, 'org-once');
    const campaignId = await approvedCampaign(api, a.human);
    const p = await json<Prepared>(await prepare(api, a.agent, 'campaign.launch', { campaignId }, 15_000));
    const wrong = await post(api, a.human, `/api/v1/agent/approvals/${p.approvalId}/approve`, { expectedActionDigest: '0'.repeat(64) });
    expect(wrong.status).toBe(409);
    expect(
      (await post(api, a.human, `/api/v1/agent/approvals/${p.approvalId}/approve`, { expectedActionDigest: p.actionDigest })).status,
    ).toBe(200);
    const again = await post(api, a.human, `/api/v1/agent/approvals/${p.approvalId}/approve`, { expectedActionDigest: p.actionDigest });
    expect(again.status).toBe(409);
    expect(await count('agent_steps', { approval_id: p.approvalId, kind: 'execute' })).toBe(1);
    expect((await post(api, a.human, `/api/v1/agent/approvals/not-a-uuid/approve`, { expectedActionDigest: p.actionDigest })).status).toBe(
      404,
    );
    const other = await actors(env, api, 'org-once-other');
    expect(
      (await post(api, other.human, `/api/v1/agent/approvals/${p.approvalId}/approve`, { expectedActionDigest: p.actionDigest })).status,
    ).toBe(404);
  });

  test('an abandoned approval can no longer be approved or executed', async () => {
    const a = await actors(env, api, 'org-abandon');
    const campaignId = await approvedCampaign(api, a.human);
    const l = await approvedLaunch(api, a, campaignId, 15_000);
    expect(
      (await post(api, a.human, `/api/v1/agent/approvals/${l.approvalId}/abandon`, { expectedActionDigest: l.actionDigest, note: '' }))
        .status,
    ).toBe(400);
    expect(
      (
        await post(api, a.human, `/api/v1/agent/approvals/${l.approvalId}/abandon`, {
          expectedActionDigest: 'a'.repeat(64),
          note: 'changed our minds',
        })
      ).status,
    ).toBe(409);
    const abandoned = await post(api, a.human, `/api/v1/agent/approvals/${l.approvalId}/abandon`, {
      expectedActionDigest: l.actionDigest,
      note: 'changed our minds',
    });
    expect(abandoned.status).toBe(200);
    expect(await json(abandoned)).toMatchObject({ approval: { status: 'abandoned', note: 'changed our minds' } });
    const res = await execute(api, a.agent, campaignId, l.stepId, l.actionDigest);
    expect(res.status).toBe(409);
    expect(await json(res)).toMatchObject({ code: 'approval_abandoned' });
    expect(
      (await post(api, a.human, `/api/v1/agent/approvals/${l.approvalId}/approve`, { expectedActionDigest: l.actionDigest })).status,
    ).toBe(409);
    expect(await count('bookings', { campaign_id: campaignId })).toBe(0);
  });
});

describe('unknown execution outcomes', () => {
  test('a 500 mid-flight leaves the step unknown: it never runs again, and is resolved once with the right digest', async () => {
    const a = await actors(env, api, 'org-unknown');
    const campaignId = await approvedCampaign(api, a.human);
    const l = await approvedLaunch(api, a, campaignId, 15_000);
    await env.db.schema.renameTable('booking_events', 'booking_events_away');
    try {
      expect((await execute(api, a.agent, campaignId, l.stepId, l.actionDigest)).status).toBe(500);
    } finally {
      await env.db.schema.renameTable('booking_events_away', 'booking_events');
    }
    const replay = await execute(api, a.agent, campaignId, l.stepId, l.actionDigest);
    expect(replay.status).toBe(409);
    expect(await json(replay)).toMatchObject({ code: 'execution_outcome_unknown' });
    expect(await count('bookings', { campaign_id: campaignId })).toBe(0);

    const path = `/api/v1/agent/steps/${l.stepId}/execution/resolve`;
    expect((await post(api, a.human, path, { expectedActionDigest: l.actionDigest, outcome: 'maybe', note: 'x' })).status).toBe(400);
    expect((await post(api, a.human, path, { expectedActionDigest: 'b'.repeat(64), outcome: 'not-applied', note: 'checked' })).status).toBe(
      409,
    );
    const resolved = await post(api, a.human, path, {
      expectedActionDigest: l.actionDigest,
      outcome: 'not-applied',
      note: 'No booking exists for the campaign.',
    });
    expect(resolved.status).toBe(200);
    expect(await json(resolved)).toMatchObject({ step: { status: 'resolved', resolution: { outcome: 'not-applied' } } });
    expect((await post(api, a.human, path, { expectedActionDigest: l.actionDigest, outcome: 'applied', note: 'again' })).status).toBe(409);
    expect(await json(await execute(api, a.agent, campaignId, l.stepId, l.actionDigest))).toMatchObject({ code: 'execution_resolved' });
  });

  test('a step that ran to a definite outcome cannot be resolved', async () => {
    const a = await actors(env, api, 'org-definite');
    const campaignId = await approvedCampaign(api, a.human);
    const l = await approvedLaunch(api, a, campaignId, 15_000);
    await execute(api, a.agent, campaignId, l.stepId, l.actionDigest);
    const res = await post(api, a.human, `/api/v1/agent/steps/${l.stepId}/execution/resolve`, {
      expectedActionDigest: l.actionDigest,
      outcome: 'applied',
      note: 'x',
    });
    expect(res.status).toBe(409);
  });
});

describe('runs and evidence', () => {
  test('evidence is recorded on a run, optionally tied to one of its steps, within the bounds of the spec', async () => {
    const a = await actors(env, api, 'org-evidence');
    const campaignId = await approvedCampaign(api, a.human);
    const l = await approvedLaunch(api, a, campaignId, 15_000);
    const path = `/api/v1/agent/runs/${l.runId}/evidence`;
    const ok = await post(api, a.agent, path, {
      kind: 'supplier.screenshot:v1',
      source: 'https://sandbox-suppliers.flightdeck.dev/x',
      content: { seen: true },
      stepId: l.stepId,
      observedAt: '2026-11-22T10:00:00Z',
    });
    expect(ok.status).toBe(201);
    for (const bad of [
      { kind: 'Bad Kind', source: 's', content: {} },
      { kind: '1abc', source: 's', content: {} },
      { kind: 'a'.repeat(121), source: 's', content: {} },
      { kind: 'ok', source: '', content: {} },
      { kind: 'ok', source: 's'.repeat(501), content: {} },
      { kind: 'ok', source: 's', content: 'text' },
      { kind: 'ok', source: 's', content: {}, observedAt: 'yesterday' },
      { kind: 'ok', source: 's', content: {}, extra: 1 },
    ]) {
      expect((await post(api, a.agent, path, bad)).status).toBe(400);
    }
    const otherRun = await approvedLaunch(api, a, await approvedCampaign(api, a.human), 15_000);
    expect((await post(api, a.agent, path, { kind: 'ok', source: 's', content: {}, stepId: otherRun.stepId })).status).toBe(404);
    const run = await json<{ run: { evidence: Array<{ kind: string; stepId: string }> } }>(
      await api.fetch(`/api/v1/agent/runs/${l.runId}`, { token: a.human }),
    );
    expect(run.run.evidence).toEqual([expect.objectContaining({ kind: 'supplier.screenshot:v1', stepId: l.stepId })]);
  });

  test('detailLimit is 1..500 (default 100) and caps each list; another tenant gets 404', async () => {
    const a = await actors(env, api, 'org-runs');
    const campaignId = await approvedCampaign(api, a.human);
    const l = await approvedLaunch(api, a, campaignId, 15_000);
    const path = `/api/v1/agent/runs/${l.runId}`;
    expect((await api.fetch(`${path}?detailLimit=0`, { token: a.human })).status).toBe(400);
    expect((await api.fetch(`${path}?detailLimit=501`, { token: a.human })).status).toBe(400);
    expect((await api.fetch(`${path}?detailLimit=1.5`, { token: a.human })).status).toBe(400);
    const capped = await json<{ run: { steps: unknown[]; truncated: { steps: boolean } } }>(
      await api.fetch(`${path}?detailLimit=1`, { token: a.human }),
    );
    expect(capped.run.steps).toHaveLength(1);
    expect(capped.run.truncated.steps).toBe(true);
    const full = await json<{ run: { steps: unknown[] } }>(await api.fetch(path, { token: a.human }));
    expect(full.run.steps).toHaveLength(2);
    const b = await actors(env, api, 'org-runs-other');
    expect((await api.fetch(path, { token: b.human })).status).toBe(404);
    expect((await post(api, b.agent, `${path}/evidence`, { kind: 'ok', source: 's', content: {} })).status).toBe(404);
  });
});
