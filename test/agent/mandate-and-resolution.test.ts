import { fundWallet } from '../support/wallet';
import { randomUUID } from 'node:crypto';
import { createTestEnv, json, type TestApi, type TestEnv } from '../support/api';
import { post } from '../support/bookings';
import { actors, approvedCampaign, approvedLaunch, execute, prepare, type Prepared } from './support';

let env: TestEnv;
let api: TestApi;
beforeAll(async () => {
  env = await createTestEnv();
  api = await env.api({ RATE_LIMIT_MAX: '100000' });
});
afterAll(() => env.close());

const bookings = async (campaignId: string) => (await env.db('bookings').where({ campaign_id: campaignId })).length;
const narrow = (human: string) =>
  post(
    api,
    human,
    '/api/v1/agent/mandates/planner-bot',
    { allowedActions: ['audience.sync'], budgetCeilingMinor: 0, currency: 'GBP' },
    'PUT',
  );

describe('the mandate binds execution as well as preparation', () => {
  test('a mandate narrowed after preparation stops the approval (403)', async () => {
    const a = await actors(env, api, 'org-m1');
    const campaignId = await approvedCampaign(api, a.human);
    const p = await json<Prepared>(await prepare(api, a.agent, 'campaign.launch', { campaignId }, 15_000));
    await narrow(a.human);
    const res = await post(api, a.human, `/api/v1/agent/approvals/${p.approvalId}/approve`, { expectedActionDigest: p.actionDigest });
    expect(res.status).toBe(403);
    expect(await json(res)).toMatchObject({ code: 'mandate_action_not_allowed' });
  });

  test('a mandate narrowed after approval stops the execution (403) and nothing is booked; the step stays pending', async () => {
    const a = await actors(env, api, 'org-m2');
    const campaignId = await approvedCampaign(api, a.human);
    const l = await approvedLaunch(api, a, campaignId, 15_000);
    await narrow(a.human);
    const res = await execute(api, a.agent, campaignId, l.stepId, l.actionDigest);
    expect(res.status).toBe(403);
    expect(await bookings(campaignId)).toBe(0);
    expect((await env.db('agent_steps').where({ id: l.stepId }).first()).status).toBe('pending');
  });
});

describe('resolving an execution', () => {
  test('the agent that ran it may resolve its own step with the bound digest, and the record names the agent', async () => {
    const a = await actors(env, api, 'org-m3');
    const campaignId = await approvedCampaign(api, a.human);
    const l = await approvedLaunch(api, a, campaignId, 15_000);
    await env.db('agent_steps').where({ id: l.stepId }).update({ status: 'unknown' });
    const path = `/api/v1/agent/steps/${l.stepId}/execution/resolve`;
    const wrongDigest = await post(api, a.agent, path, { expectedActionDigest: 'c'.repeat(64), outcome: 'not-applied', note: 'mine' });
    expect(wrongDigest.status).toBe(409);
    expect((await env.db('agent_steps').where({ id: l.stepId }).first()).status).toBe('unknown');
    const ok = await post(api, a.agent, path, { expectedActionDigest: l.actionDigest, outcome: 'not-applied', note: 'mine' });
    expect(ok.status).toBe(200);
    expect(await json(ok)).toMatchObject({ step: { status: 'resolved', resolution: { resolvedBy: 'org-m3-lead|agent:planner-bot' } } });
  });

  test('another agent of the workspace cannot resolve a step it did not run (403); a person can resolve any', async () => {
    const a = await actors(env, api, 'org-m3b');
    const campaignId = await approvedCampaign(api, a.human);
    const l = await approvedLaunch(api, a, campaignId, 15_000);
    await env.db('agent_steps').where({ id: l.stepId }).update({ status: 'unknown' });
    const path = `/api/v1/agent/steps/${l.stepId}/execution/resolve`;
    const other = await env.issuer.token({ org: 'org-m3b', user: 'org-m3b-lead', agent: 'other-bot' });
    const refused = await post(api, other, path, { expectedActionDigest: l.actionDigest, outcome: 'applied', note: 'not mine' });
    expect(refused.status).toBe(403);
    expect(await json(refused)).toMatchObject({ code: 'not_own_step' });
    expect((await env.db('agent_steps').where({ id: l.stepId }).first()).status).toBe('unknown');
    const ok = await post(api, a.human, path, { expectedActionDigest: l.actionDigest, outcome: 'not-applied', note: 'checked' });
    expect(await json(ok)).toMatchObject({ step: { resolution: { resolvedBy: 'org-m3b-lead' } } });
  });

  test('an execution that may still be running cannot be resolved until it has been stuck a minute', async () => {
    const a = await actors(env, api, 'org-m4');
    const campaignId = await approvedCampaign(api, a.human);
    const l = await approvedLaunch(api, a, campaignId, 15_000);
    const path = `/api/v1/agent/steps/${l.stepId}/execution/resolve`;
    await env.db('agent_steps').where({ id: l.stepId }).update({ status: 'executing', started_at: new Date() });
    const fresh = await post(api, a.human, path, { expectedActionDigest: l.actionDigest, outcome: 'applied', note: 'x' });
    expect(fresh.status).toBe(409);
    expect(await json(fresh)).toMatchObject({ code: 'execution_in_flight' });
    await env
      .db('agent_steps')
      .where({ id: l.stepId })
      .update({ started_at: new Date(Date.now() - 120_000) });
    expect((await post(api, a.human, path, { expectedActionDigest: l.actionDigest, outcome: 'applied', note: 'x' })).status).toBe(200);
  });
});

test('a replayed study draft returns its receipt, though the approval it used is now spent', async () => {
  const a = await actors(env, api, 'org-m5', { allowedActions: ['study.draft'], budgetCeilingMinor: 500_000, currency: 'GBP' });
  await fundWallet(env, 'org-m5', 1_000_000);
  const { study } = await json<{ study: { id: string } }>(await post(api, a.human, '/api/v1/brand-lift-studies', { name: 'Lift' }));
  const { quote } = await json<{ quote: { id: string; amountMinor: number } }>(
    await post(api, a.human, `/api/v1/brand-lift-studies/${study.id}/quotes`, { sampleSize: 500 }),
  );
  const { approval } = await json<{ approval: { id: string } }>(
    await post(api, a.human, `/api/v1/brand-lift-studies/${study.id}/approvals`, { quoteId: quote.id }),
  );
  const parameters = {
    studyId: study.id,
    expectedRevision: 1,
    expectedConnectionRevision: null,
    quoteId: quote.id,
    approvalId: approval.id,
  };
  const p = await json<Prepared>(await prepare(api, a.agent, 'study.draft', parameters, quote.amountMinor));
  const { executeStep } = await json<{ executeStep: { id: string } }>(
    await post(api, a.human, `/api/v1/agent/approvals/${p.approvalId}/approve`, { expectedActionDigest: p.actionDigest }),
  );
  const { studyId, ...body } = parameters;
  const send = () =>
    api.fetch(`/api/v1/brand-lift-studies/${studyId}/draft`, {
      method: 'POST',
      token: a.agent,
      headers: {
        'content-type': 'application/json',
        'idempotency-key': randomUUID(),
        'x-flightdeck-agent-step-id': executeStep.id,
        'x-flightdeck-agent-action-digest': p.actionDigest,
      },
      body: JSON.stringify(body),
    });
  const first = await send();
  expect(first.status).toBe(200);
  const replay = await send();
  expect(replay.status).toBe(200);
  expect(replay.headers.get('x-flightdeck-receipt')).toBe('replayed');
  expect(await json(replay)).toEqual(await json(first));
});

test("a run is as hidden as its action's campaign from a caller outside that campaign's product", async () => {
  const a = await actors(env, api, 'org-m6');
  const campaignId = await approvedCampaign(api, a.human);
  const l = await approvedLaunch(api, a, campaignId, 15_000);
  const doohOnly = await env.issuer.token({ org: 'org-m6', user: 'org-m6-lead', product: 'flightdeck-dooh' });
  expect((await api.fetch(`/api/v1/agent/runs/${l.runId}`, { token: doohOnly })).status).toBe(404);
  expect((await api.fetch(`/api/v1/agent/runs/${l.runId}`, { token: a.human })).status).toBe(200);
});
