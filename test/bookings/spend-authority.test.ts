import { createTestEnv, json, type TestApi, type TestEnv } from '../support/api';
import { draftCampaign, post } from '../support/bookings';
import { actors, approvedCampaign, prepare, type Prepared } from '../agent/support';

let env: TestEnv;
let api: TestApi;
beforeAll(async () => {
  env = await createTestEnv();
  api = await env.api();
});
afterAll(() => env.close());

const LINES = [{ channel: 'ctv', adapterKey: 'sandbox-ctv', budgetMinor: 20_000 }];
const count = async (table: string, where: Record<string, unknown>) => Number((await env.db(table).where(where).count({ n: '*' }))[0]!.n);
const planRow = (campaignId: string) => env.db('plans').where({ campaign_id: campaignId }).first();

type PlanBody = { plan: { status: string; approvals: Array<{ userId: string }>; approvalsRequired: number; approvedBy: string | null } };

describe('who may approve and launch', () => {
  test('a member without plan:approve or campaign:launch is refused with 403 and nothing changes; each permission opens its own step', async () => {
    const org = 'org-spend-1';
    const author = await env.issuer.token({ org, user: 'author' });
    const member = await env.issuer.token({ org, user: 'member', permissions: [] });
    const approver = await env.issuer.token({ org, user: 'approver', permissions: ['plan:approve'] });
    const launcher = await env.issuer.token({ org, user: 'launcher', permissions: ['campaign:launch'] });
    const { campaignId, planVersion } = await draftCampaign(api, author, LINES);

    const refused = await post(api, member, `/api/v1/campaigns/${campaignId}/plan/approve`, { expectedVersion: planVersion });
    expect(refused.status).toBe(403);
    expect(await json(refused)).toMatchObject({ code: 'permission_required', recovery: 'terminal' });
    expect(await planRow(campaignId)).toMatchObject({ status: 'draft', approved_digest: null, approvals: [] });
    // Launching is a permission of its own: approving does not give it.
    expect((await post(api, launcher, `/api/v1/campaigns/${campaignId}/plan/approve`, { expectedVersion: planVersion })).status).toBe(403);

    expect((await post(api, approver, `/api/v1/campaigns/${campaignId}/plan/approve`, { expectedVersion: planVersion })).status).toBe(200);
    for (const token of [member, approver]) {
      const res = await post(api, token, `/api/v1/campaigns/${campaignId}/launch`);
      expect(res.status).toBe(403);
      expect((await json(res)).code).toBe('permission_required');
    }
    expect(await count('bookings', { campaign_id: campaignId })).toBe(0);
    expect((await post(api, launcher, `/api/v1/campaigns/${campaignId}/launch`)).status).toBe(202);
    expect(await count('bookings', { campaign_id: campaignId })).toBe(1);
  });

  test("a delegated agent cannot approve a plan, and an agent's launch needs an approver who holds campaign:launch", async () => {
    const a = await actors(env, api, 'org-spend-2');
    const campaignId = await approvedCampaign(api, a.human);
    const plan = await planRow(campaignId);
    const agentApproves = await post(api, a.agent, `/api/v1/campaigns/${campaignId}/plan/approve`, { expectedVersion: plan.version });
    expect(agentApproves.status).toBe(403);
    expect((await json(agentApproves)).code).toBe('human_required');

    const prepared = (await json(await prepare(api, a.agent, 'campaign.launch', { campaignId }, 15_000))) as unknown as Prepared;
    // agent:approve alone is weaker than what a person needs to launch: refused, and the approval stays pending.
    const reviewer = await env.issuer.token({ org: a.org, user: 'reviewer', permissions: ['agent:approve'] });
    const refused = await post(api, reviewer, `/api/v1/agent/approvals/${prepared.approvalId}/approve`, {
      expectedActionDigest: prepared.actionDigest,
    });
    expect(refused.status).toBe(403);
    expect(await json(refused)).toMatchObject({ code: 'permission_required' });
    expect(await env.db('agent_approvals').where({ id: prepared.approvalId }).first()).toMatchObject({
      status: 'pending',
      execute_step_id: null,
    });
    const ok = await post(api, a.human, `/api/v1/agent/approvals/${prepared.approvalId}/approve`, {
      expectedActionDigest: prepared.actionDigest,
    });
    expect(ok.status).toBe(200);
  });
});

describe('a second approver above an amount', () => {
  const org = 'org-spend-3';
  const settings = (token: string, body: unknown) => post(api, token, '/api/v1/workspace/settings', body, 'PUT');

  test('only a person with workspace:admin sets the amount; bad bodies are 400 and change nothing', async () => {
    const member = await env.issuer.token({ org, user: 'author' });
    const admin = await env.issuer.token({ org, user: 'owner', permissions: ['workspace:admin'] });
    const agent = await env.issuer.token({ org, user: 'owner', agent: 'planner-bot' });
    expect(await json(await api.fetch('/api/v1/workspace/settings', { token: member }))).toEqual({ secondApprovalAboveMinor: null });
    expect((await json(await settings(member, { secondApprovalAboveMinor: 10_000 }))).code).toBe('permission_required');
    expect((await json(await settings(agent, { secondApprovalAboveMinor: 10_000 }))).code).toBe('human_required');
    for (const bad of [
      { secondApprovalAboveMinor: -1 },
      { secondApprovalAboveMinor: 1.5 },
      { secondApprovalAboveMinor: 1, extra: true },
      {},
    ]) {
      expect((await settings(admin, bad)).status).toBe(400);
    }
    expect(await json(await api.fetch('/api/v1/workspace/settings', { token: member }))).toEqual({ secondApprovalAboveMinor: null });
    const saved = await settings(admin, { secondApprovalAboveMinor: 20_000 });
    expect(saved.status).toBe(200);
    expect(await json(saved)).toEqual({ secondApprovalAboveMinor: 20_000 });
  });

  test('above the amount the author cannot approve alone: a second person makes the plan approved; at the amount one suffices', async () => {
    const author = await env.issuer.token({ org, user: 'author' });
    const second = await env.issuer.token({ org, user: 'second', permissions: ['plan:approve'] });
    const above = await draftCampaign(api, author, LINES, { maximumCommitmentMinor: 20_001 });
    const first = await post(api, author, `/api/v1/campaigns/${above.campaignId}/plan/approve`, { expectedVersion: above.planVersion });
    expect(first.status).toBe(200);
    const pending = (await json(first)) as unknown as PlanBody;
    expect(pending.plan).toMatchObject({ status: 'draft', approvalsRequired: 2, approvedBy: null });
    expect(pending.plan.approvals.map((x) => x.userId)).toEqual(['author']);

    const again = await post(api, author, `/api/v1/campaigns/${above.campaignId}/plan/approve`, { expectedVersion: above.planVersion });
    expect(again.status).toBe(409);
    expect((await json(again)).code).toBe('second_approver_required');
    const early = await post(api, author, `/api/v1/campaigns/${above.campaignId}/launch`);
    expect(early.status).toBe(409);
    expect((await json(early)).code).toBe('plan_not_approved');
    expect(await count('bookings', { campaign_id: above.campaignId })).toBe(0);

    const done = (await json(
      await post(api, second, `/api/v1/campaigns/${above.campaignId}/plan/approve`, { expectedVersion: above.planVersion }),
    )) as unknown as PlanBody;
    expect(done.plan).toMatchObject({ status: 'approved', approvedBy: 'second' });
    expect(done.plan.approvals.map((x) => x.userId)).toEqual(['author', 'second']);
    expect((await post(api, author, `/api/v1/campaigns/${above.campaignId}/launch`)).status).toBe(202);

    const at = await draftCampaign(api, author, LINES, { maximumCommitmentMinor: 20_000 });
    const alone = (await json(
      await post(api, author, `/api/v1/campaigns/${at.campaignId}/plan/approve`, { expectedVersion: at.planVersion }),
    )) as unknown as PlanBody;
    expect(alone.plan).toMatchObject({ status: 'approved', approvalsRequired: 1 });
  });

  test('a changed plan needs both approvals again', async () => {
    const author = await env.issuer.token({ org, user: 'author' });
    const d = await draftCampaign(api, author, LINES, { maximumCommitmentMinor: 30_000 });
    await post(api, author, `/api/v1/campaigns/${d.campaignId}/plan/approve`, { expectedVersion: d.planVersion });
    const replaced = await post(
      api,
      author,
      `/api/v1/campaigns/${d.campaignId}/plan`,
      { lines: LINES, expectedVersion: d.planVersion },
      'PUT',
    );
    expect(((await json(replaced)) as unknown as PlanBody).plan.approvals).toEqual([]);
    const one = await post(api, author, `/api/v1/campaigns/${d.campaignId}/plan/approve`, { expectedVersion: d.planVersion + 1 });
    expect(((await json(one)) as unknown as PlanBody).plan.status).toBe('draft');
  });
});
