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

const bookingsOf = async (campaignId: string) =>
  Number((await env.db('bookings').where({ campaign_id: campaignId }).count({ n: '*' }))[0]!.n);

describe('campaign.launch by a delegated agent', () => {
  test('prepare → human approval → execute with bound headers books once; a replay returns the receipt and books nothing more', async () => {
    const a = await actors(env, api, 'org-happy');
    const campaignId = await approvedCampaign(api, a.human);
    const prepared = await prepare(api, a.agent, 'campaign.launch', { campaignId }, 15_000);
    expect(prepared.status).toBe(201);
    const p = await json<Prepared & { action: unknown; execute: unknown }>(prepared);
    expect(p.commitment).toMatchObject({ budgetMinor: 15_000, currency: 'GBP', policy: 'campaign-commitment' });
    expect(p.action).toEqual({ name: 'campaign.launch', parameters: { campaignId }, budgetMinor: 15_000, currency: 'GBP' });
    // The digest is SHA-256 over RFC 8785 canonical JSON, whatever order we write the keys in.
    const independent = createHash('sha256')
      .update(canonicalize({ currency: 'GBP', budgetMinor: 15_000, parameters: { campaignId }, name: 'campaign.launch' }))
      .digest('hex');
    expect(p.actionDigest).toBe(independent);

    const approved = await post(api, a.human, `/api/v1/agent/approvals/${p.approvalId}/approve`, { expectedActionDigest: p.actionDigest });
    expect(approved.status).toBe(200);
    const { executeStep } = await json<{ executeStep: { id: string; status: string } }>(approved);
    expect(executeStep.status).toBe('pending');

    const first = await execute(api, a.agent, campaignId, executeStep.id, p.actionDigest);
    expect(first.status).toBe(202);
    const firstBody = await json<{ booking: { id: string; events: Array<{ actor: string; actorId: string; action: string }> } }>(first);
    expect(firstBody.booking.events[0]).toMatchObject({
      action: 'booking.launched',
      actor: 'agent',
      actorId: 'org-happy-lead|agent:planner-bot',
    });

    const replay = await execute(api, a.agent, campaignId, executeStep.id, p.actionDigest);
    expect(replay.status).toBe(202);
    expect(replay.headers.get('x-flightdeck-receipt')).toBe('replayed');
    expect(await json(replay)).toEqual(firstBody);
    expect(await bookingsOf(campaignId)).toBe(1);

    const run = await json<{
      run: { steps: Array<{ kind: string; status: string }>; approvals: Array<{ status: string }>; receipts: Array<{ status: number }> };
    }>(await api.fetch(`/api/v1/agent/runs/${p.runId}`, { token: a.agent }));
    expect(run.run.steps.map((s) => [s.kind, s.status])).toEqual([
      ['prepare', 'completed'],
      ['execute', 'succeeded'],
    ]);
    expect(run.run.approvals.map((x) => x.status)).toEqual(['approved']);
    expect(run.run.receipts.map((r) => r.status)).toEqual([202]);
    const journal = await env.db('mission_journal').where({ run_id: p.runId }).orderBy('seq').pluck('entry_type');
    expect(journal).toEqual(['action.prepared', 'action.approved', 'action.executed']);
  });

  test('concurrent executions of one step book exactly once, and every caller gets the same outcome', async () => {
    const a = await actors(env, api, 'org-race');
    const campaignId = await approvedCampaign(api, a.human);
    const l = await approvedLaunch(api, a, campaignId, 15_000);
    // A replay waits a few seconds for the first call's receipt; on a slow machine it may be told
    // (409 execution_in_flight, transient) to ask again, which it does.
    const attempt = async (): Promise<Response> => {
      for (;;) {
        const res = await execute(api, a.agent, campaignId, l.stepId, l.actionDigest);
        if (res.status !== 409) return res;
        expect(await json<{ code: string }>(res)).toMatchObject({ code: 'execution_in_flight' });
        await new Promise((r) => setTimeout(r, 200));
      }
    };
    const results = await Promise.all(Array.from({ length: 6 }, attempt));
    expect(results.map((r) => r.status)).toEqual(Array(6).fill(202));
    const ids = new Set(await Promise.all(results.map(async (r) => (await json<{ booking: { id: string } }>(r)).booking.id)));
    expect(ids.size).toBe(1);
    expect(await bookingsOf(campaignId)).toBe(1);
    expect(results.filter((r) => r.headers.get('x-flightdeck-receipt') === 'replayed')).toHaveLength(5);
  });

  describe('refusals execute nothing', () => {
    test('without the headers a delegated agent is refused (403)', async () => {
      const a = await actors(env, api, 'org-nohdr');
      const campaignId = await approvedCampaign(api, a.human);
      const l = await approvedLaunch(api, a, campaignId, 15_000);
      expect((await execute(api, a.agent, campaignId)).status).toBe(403);
      expect((await execute(api, a.agent, campaignId, l.stepId)).status).toBe(403);
      expect(await json(await execute(api, a.agent, campaignId, undefined, l.actionDigest))).toMatchObject({
        code: 'execution_binding_required',
      });
      expect(await bookingsOf(campaignId)).toBe(0);
    });

    test('a digest header other than the approved one is refused (403)', async () => {
      const a = await actors(env, api, 'org-digest');
      const campaignId = await approvedCampaign(api, a.human);
      const l = await approvedLaunch(api, a, campaignId, 15_000);
      const res = await execute(api, a.agent, campaignId, l.stepId, 'f'.repeat(64));
      expect(res.status).toBe(403);
      expect((await execute(api, a.agent, campaignId, l.stepId, 'NOT-HEX')).status).toBe(400);
      expect(await bookingsOf(campaignId)).toBe(0);
      // The step is still usable with the right binding.
      expect((await execute(api, a.agent, campaignId, l.stepId, l.actionDigest)).status).toBe(202);
    });

    test("another tenant's step, and another agent's, are refused (403)", async () => {
      const a = await actors(env, api, 'org-owner');
      const campaignId = await approvedCampaign(api, a.human);
      const l = await approvedLaunch(api, a, campaignId, 15_000);
      const b = await actors(env, api, 'org-thief');
      const theirs = await approvedCampaign(api, b.human);
      expect((await execute(api, b.agent, theirs, l.stepId, l.actionDigest)).status).toBe(403);
      const otherAgent = await env.issuer.token({ org: 'org-owner', user: 'org-owner-lead', agent: 'other-bot' });
      expect((await execute(api, otherAgent, campaignId, l.stepId, l.actionDigest)).status).toBe(403);
      expect(await bookingsOf(campaignId)).toBe(0);
      expect(await bookingsOf(theirs)).toBe(0);
    });

    test('a step approved for one campaign cannot launch another (409), and a used step cannot be reused for it', async () => {
      const a = await actors(env, api, 'org-swap');
      const approvedOne = await approvedCampaign(api, a.human);
      const other = await approvedCampaign(api, a.human);
      const l = await approvedLaunch(api, a, approvedOne, 15_000);
      const swapped = await execute(api, a.agent, other, l.stepId, l.actionDigest);
      expect(swapped.status).toBe(409);
      expect(await json(swapped)).toMatchObject({ code: 'action_changed' });
      expect((await execute(api, a.agent, approvedOne, l.stepId, l.actionDigest)).status).toBe(202);
      expect((await execute(api, a.agent, other, l.stepId, l.actionDigest)).status).toBe(409);
      expect(await bookingsOf(other)).toBe(0);
    });

    test('a campaign changed after approval changes the digest: execution is refused (409) and nothing is booked', async () => {
      const a = await actors(env, api, 'org-moved');
      const campaignId = await approvedCampaign(api, a.human);
      const l = await approvedLaunch(api, a, campaignId, 15_000);
      await env.db('campaigns').where({ id: campaignId }).update({ maximum_commitment_minor: 40_000 });
      const res = await execute(api, a.agent, campaignId, l.stepId, l.actionDigest);
      expect(res.status).toBe(409);
      expect(await json(res)).toMatchObject({ code: 'action_changed' });
      expect(await bookingsOf(campaignId)).toBe(0);
    });

    test('an agent whose product leaves out the campaign’s channel is not found (404), and the approved step is not taken', async () => {
      const a = await actors(env, api, 'org-narrow');
      const campaignId = await approvedCampaign(api, a.human);
      const l = await approvedLaunch(api, a, campaignId, 15_000);
      const dooh = await env.issuer.token({ org: 'org-narrow', user: 'org-narrow-lead', agent: 'planner-bot', product: 'flightdeck-dooh' });
      const refused = await execute(api, dooh, campaignId, l.stepId, l.actionDigest);
      const unknown = await execute(api, dooh, crypto.randomUUID(), l.stepId, l.actionDigest);
      expect(refused.status).toBe(404);
      expect({ ...(await json<object>(refused)), requestId: null }).toEqual({ ...(await json<object>(unknown)), requestId: null });
      expect(await bookingsOf(campaignId)).toBe(0);
      // The step still launches for the agent within the product it was approved in.
      const launched = await execute(api, a.agent, campaignId, l.stepId, l.actionDigest);
      expect(launched.status).toBe(202);
      expect(launched.headers.get('x-flightdeck-receipt')).toBeNull();
    });

    test('a human launching needs no headers', async () => {
      const a = await actors(env, api, 'org-human');
      const campaignId = await approvedCampaign(api, a.human);
      expect((await execute(api, a.human, campaignId)).status).toBe(202);
    });
  });
});
