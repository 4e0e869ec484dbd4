import { randomUUID } from 'node:crypto';
import { createTestEnv, json, type TestApi, type TestEnv } from '../support/api';
import { launchPlan, post, readBooking, waitForBooking, type BookingBody } from '../support/bookings';
import { actors, DIGEST, prepare, STEP, type Actors, type Prepared } from './support';

let env: TestEnv;
let api: TestApi;
beforeAll(async () => {
  env = await createTestEnv();
  api = await env.api();
  await env.workers();
});
afterAll(() => env.close());

const IN_FLIGHT = ['campaign.pause', 'campaign.resume', 'campaign.stop', 'campaign.amend'];

async function runningCampaign(a: Actors) {
  const human = await env.issuer.token({ org: a.org, user: `${a.org}-buyer` });
  const launched = await launchPlan(env, api, [{ channel: 'ctv', adapterKey: 'sandbox-ctv', budgetMinor: 10_000 }], a.org, {
    maximumCommitmentMinor: 20_000,
  });
  const booking = await waitForBooking(api, human, launched.booking.id, (b) => b.lines[0]!.status === 'confirmed');
  return { campaignId: launched.campaignId, booking, human };
}

/** prepare → a person approves the exact digest → the execute step id the agent binds. */
async function approved(a: Actors, name: string, parameters: Record<string, unknown>, budgetMinor: number) {
  const res = await prepare(api, a.agent, name, parameters, budgetMinor);
  expect(res.status).toBe(201);
  const p = await json<Prepared>(res);
  const ok = await post(api, a.human, `/api/v1/agent/approvals/${p.approvalId}/approve`, { expectedActionDigest: p.actionDigest });
  expect(ok.status).toBe(200);
  const { executeStep } = await json<{ executeStep: { id: string } }>(ok);
  return { ...p, stepId: executeStep.id };
}

const bound = (stepId: string, digest: string, extra: Record<string, string> = {}) => ({
  'content-type': 'application/json',
  [STEP]: stepId,
  [DIGEST]: digest,
  ...extra,
});

describe('in-flight control by a delegated agent', () => {
  test('campaign.pause: prepared at no spend, approved by a person, executed once with bound headers; a replay is the receipt', async () => {
    const a = await actors(env, api, 'org-pause', { allowedActions: IN_FLIGHT, budgetCeilingMinor: 50_000, currency: 'GBP' });
    const { campaignId, booking } = await runningCampaign(a);
    const p = await approved(a, 'campaign.pause', { campaignId, note: 'Unsafe placements reported' }, 0);
    expect(p.commitment).toMatchObject({ budgetMinor: 0, policy: 'zero' });
    const call = () =>
      api.fetch(`/api/v1/campaigns/${campaignId}/pause`, {
        method: 'POST',
        token: a.agent,
        headers: bound(p.stepId, p.actionDigest),
        body: JSON.stringify({ note: 'Unsafe placements reported' }),
      });
    const first = await call();
    expect(first.status).toBe(202);
    const body = await json<{ booking: BookingBody; requested: string[] }>(first);
    expect(body.requested).toEqual([booking.lines[0]!.id]);
    const replay = await call();
    expect(replay.status).toBe(202);
    expect(await env.db('line_operations').where({ booking_id: booking.id })).toHaveLength(1);
    const paused = await waitForBooking(api, a.human, booking.id, (b) => b.lines[0]!.status === 'stopped');
    const requested = paused.events.find((e) => e.action === 'line.pause-requested')!;
    expect(requested).toMatchObject({ actor: 'agent', actorId: `${a.org}-lead|agent:planner-bot` });
    // The step is bound to the approved pause: it cannot run another action.
    const other = await api.fetch(`/api/v1/campaigns/${campaignId}/resume`, {
      method: 'POST',
      token: a.agent,
      headers: bound(p.stepId, p.actionDigest),
      body: JSON.stringify({}),
    });
    expect(other.status).toBe(403);
    expect((await readBooking(api, a.human, booking.id)).lines[0]!.status).toBe('stopped');
  });

  test('campaign.amend: the approval covers the increase the server computes; executing it needs the Idempotency-Key too', async () => {
    const a = await actors(env, api, 'org-amend', { allowedActions: IN_FLIGHT, budgetCeilingMinor: 50_000, currency: 'GBP' });
    const { campaignId, booking } = await runningCampaign(a);
    const parameters = { campaignId, expectedVersion: booking.version, lines: [{ lineId: booking.lines[0]!.id, budgetMinor: 14_000 }] };
    // The agent may not name its own figure: the server's is the increase over the line's budget.
    const wrong = await prepare(api, a.agent, 'campaign.amend', parameters, 1_000);
    expect(wrong.status).toBe(409);
    const p = await approved(a, 'campaign.amend', parameters, 4_000);
    expect(p.commitment).toMatchObject({ budgetMinor: 4_000, policy: 'incremental-commitment' });
    const { campaignId: _c, ...body } = parameters;
    const execute = (key?: string) =>
      api.fetch(`/api/v1/campaigns/${campaignId}/amendments`, {
        method: 'POST',
        token: a.agent,
        headers: bound(p.stepId, p.actionDigest, key ? { 'idempotency-key': key } : {}),
        body: JSON.stringify(body),
      });
    expect((await execute()).status).toBe(400);
    const key = randomUUID();
    const first = await execute(key);
    expect(first.status).toBe(202);
    await waitForBooking(api, a.human, booking.id, (b) => b.lines[0]!.budgetMinor === 14_000);
    expect((await execute(key)).status).toBe(202);
    expect(await env.db('booking_amendments').where({ booking_id: booking.id })).toHaveLength(1);
  });

  test('campaign.amend over the maximum commitment is refused when prepared: no one is asked to approve what execution would refuse', async () => {
    const a = await actors(env, api, 'org-amend-over', { allowedActions: IN_FLIGHT, budgetCeilingMinor: 50_000, currency: 'GBP' });
    const { campaignId, booking } = await runningCampaign(a);
    const approvals = () => env.db('agent_approvals').where({ advertiser_id: a.org }).count({ n: '*' }).first();
    const before = await approvals();
    // The line's £100 may go to £200 (the campaign's maximum commitment), not to £200.01.
    const over = await prepare(
      api,
      a.agent,
      'campaign.amend',
      { campaignId, expectedVersion: booking.version, lines: [{ lineId: booking.lines[0]!.id, budgetMinor: 20_001 }] },
      10_001,
    );
    expect(over.status).toBe(409);
    expect(await json(over)).toMatchObject({ code: 'commitment_limit_exceeded' });
    expect(await approvals()).toEqual(before);
    const within = await prepare(
      api,
      a.agent,
      'campaign.amend',
      { campaignId, expectedVersion: booking.version, lines: [{ lineId: booking.lines[0]!.id, budgetMinor: 20_000 }] },
      10_000,
    );
    expect(within.status).toBe(201);
  });

  test('an agent without an approved step cannot pause, resume, stop or amend; a mandate without the action cannot prepare it', async () => {
    const a = await actors(env, api, 'org-bare', { allowedActions: ['campaign.pause'], budgetCeilingMinor: 0, currency: 'GBP' });
    const { campaignId, booking } = await runningCampaign(a);
    for (const what of ['pause', 'resume', 'stop']) {
      expect((await post(api, a.agent, `/api/v1/campaigns/${campaignId}/${what}`)).status).toBe(403);
    }
    expect((await prepare(api, a.agent, 'campaign.stop', { campaignId }, 0)).status).toBe(403);
    expect((await readBooking(api, a.human, booking.id)).lines[0]!.status).toBe('confirmed');
    expect(await env.db('line_operations').where({ booking_id: booking.id })).toHaveLength(0);
  });
});
