import { randomUUID } from 'node:crypto';
import { createTestEnv, json, type TestApi, type TestEnv } from '../support/api';
import { allDefinite, launchPlan, post, waitForBooking } from '../support/bookings';
import { DIGEST, STEP, actors, prepare, type Prepared } from '../agent/support';
import { rowsJson, sendOutcomes, withoutRequestId } from './support';

let env: TestEnv;
let api: TestApi;
beforeAll(async () => {
  env = await createTestEnv();
  api = await env.api();
  await env.workers();
});
afterAll(() => env.close());

interface Optimization {
  id: string;
  kind: string;
  status: string;
  reason: string;
  figures: Record<string, unknown>;
  change: { type: string; expectedVersion: number; lines: Array<{ channel: string; budgetMinor: number }> };
}

/** A launched campaign whose sandbox suppliers confirm the ctv line and reject the dooh one (a budget ending in 91). */
async function withRejectedLine(org: string) {
  const launched = await launchPlan(
    env,
    api,
    [
      { channel: 'ctv', adapterKey: 'sandbox-ctv', budgetMinor: 10_000 },
      { channel: 'audio', adapterKey: 'sandbox-audio', budgetMinor: 30_000 },
      { channel: 'dooh', adapterKey: 'sandbox-dooh', budgetMinor: 5_091 },
    ],
    org,
  );
  await waitForBooking(api, launched.token, launched.booking.id, allDefinite);
  return launched;
}

const list = async (token: string, campaignId: string) =>
  (await json<{ optimizations: Optimization[] }>(await api.fetch(`/api/v1/campaigns/${campaignId}/optimizations`, { token })))
    .optimizations;
const decide = (token: string, id: string, what: 'reject' | 'accept', headers: Record<string, string> = {}) =>
  api.fetch(`/api/v1/optimizations/${id}/${what}`, { method: 'POST', token, headers });
const planOf = async (token: string, planId: string) =>
  (
    await json<{ plan: { version: number; status: string; lines: Array<{ channel: string; budgetMinor: number }> } }>(
      await api.fetch(`/api/v1/plans/${planId}`, { token }),
    )
  ).plan;
const optimizationRows = () => env.db('optimizations').orderBy('id').select('id', 'status', 'decided_by');

describe('optimizations', () => {
  test("a rejected line's budget is suggested for the confirmed lines, pro rata, with its reason, figures and exact plan amendment", async () => {
    const { token, campaignId } = await withRejectedLine('org-opt-1');
    const found = await list(token, campaignId);
    expect(found).toHaveLength(1);
    const [o] = found;
    expect(o).toMatchObject({ kind: 'reallocate-rejected-budget', status: 'open' });
    expect(o!.reason).toMatch(/rejected the dooh line/);
    expect(o!.figures).toMatchObject({ movedMinor: 5_091 });
    // 5091 over 10000 : 30000 → 1272 and 3819 (the remainder goes to the larger line).
    expect(o!.change).toMatchObject({
      type: 'plan-amendment',
      expectedVersion: 1,
      lines: [
        { channel: 'ctv', budgetMinor: 11_272 },
        { channel: 'audio', budgetMinor: 33_819 },
      ],
    });
    expect((await list(token, campaignId)).map((x) => x.id)).toEqual([o!.id]);
  });

  test('a person accepts: the amendment goes through the plan path once; deciding again is a 409 that changes nothing', async () => {
    const { token, campaignId, planId } = await withRejectedLine('org-opt-2');
    const [o] = await list(token, campaignId);
    const res = await decide(token, o!.id, 'accept');
    expect(res.status).toBe(200);
    const body = await json<{ optimization: Optimization; plan: { version: number; status: string } }>(res);
    expect(body.optimization.status).toBe('accepted');
    expect(body.plan).toMatchObject({ version: 2, status: 'draft' });
    const plan = await planOf(token, planId);
    expect(plan.lines.map((l) => [l.channel, l.budgetMinor])).toEqual([
      ['ctv', 11_272],
      ['audio', 33_819],
    ]);
    const before = await optimizationRows();
    for (const what of ['accept', 'reject'] as const) {
      const again = await decide(token, o!.id, what);
      expect(again.status).toBe(409);
      expect(await json(again)).toMatchObject({ code: 'optimization_accepted' });
    }
    expect(await optimizationRows()).toEqual(before);
    expect((await planOf(token, planId)).version).toBe(2);
  });

  test('a person rejects once; rejecting or accepting it afterwards is a 409 and the plan is untouched', async () => {
    const { token, campaignId, planId } = await withRejectedLine('org-opt-3');
    const [o] = await list(token, campaignId);
    const res = await decide(token, o!.id, 'reject');
    expect(res.status).toBe(200);
    expect((await json<{ optimization: Optimization }>(res)).optimization.status).toBe('rejected');
    const before = await optimizationRows();
    for (const what of ['reject', 'accept'] as const) {
      const again = await decide(token, o!.id, what);
      expect(again.status).toBe(409);
      expect(await json(again)).toMatchObject({ code: 'optimization_rejected' });
    }
    expect(await optimizationRows()).toEqual(before);
    expect((await planOf(token, planId)).version).toBe(1);
    // A rejected suggestion is not made again for the same plan.
    expect((await list(token, campaignId)).map((x) => x.status)).toEqual(['rejected']);
  });

  test('a suggestion whose plan has moved on is stale: deciding on it is a 409 and changes nothing', async () => {
    const { token, campaignId, planId } = await withRejectedLine('org-opt-4');
    const [o] = await list(token, campaignId);
    // As if the plan had moved on since (a running campaign's plan is not replaced over the API).
    await env
      .db('plans')
      .where({ id: planId })
      .update({
        version: 2,
        status: 'draft',
        lines: JSON.stringify([{ id: randomUUID(), channel: 'ctv', adapterKey: 'sandbox-ctv', budgetMinor: 9_000, creativeIds: [] }]),
      });
    const res = await decide(token, o!.id, 'reject');
    expect(res.status).toBe(409);
    expect(await json(res)).toMatchObject({ code: 'optimization_stale' });
    expect((await decide(token, o!.id, 'accept')).status).toBe(409);
    expect((await list(token, campaignId)).find((x) => x.id === o!.id)?.status).toBe('stale');
    expect((await planOf(token, planId)).lines).toEqual([expect.objectContaining({ budgetMinor: 9_000 })]);
  });

  test('a line confirmed longer ago than the idle threshold, with no outcome or pixel event since, is suggested for removal until an outcome arrives', async () => {
    const { token, campaignId, booking } = await withRejectedLine('org-opt-5');
    // As if the ctv line had been confirmed three weeks ago.
    const ctv = booking.lines.find((l) => l.channel === 'ctv')!;
    await env
      .db('booking_lines')
      .where({ id: ctv.id })
      .update({ confirmed_at: new Date(Date.now() - 21 * 86_400_000) });
    const idle = (await list(token, campaignId)).find((x) => x.kind === 'remove-idle-line');
    expect(idle).toBeDefined();
    expect(idle!.figures).toMatchObject({ daysSinceConfirmed: 21, idleDaysThreshold: 14, lastOutcomeDate: null, savedMinor: 10_000 });
    expect(idle!.change.lines.map((l) => l.channel)).toEqual(['audio', 'dooh']);
    const today = new Date().toISOString().slice(0, 10);
    const imported = await sendOutcomes(api, token, campaignId, rowsJson([{ date: today, market: 'london', metric: 'visits', value: 3 }]));
    expect(imported.status).toBe(201);
    expect((await list(token, campaignId)).find((x) => x.id === idle!.id)?.status).toBe('stale');
  });

  test('a delegated agent rejects only through the governed flow; a repeat with the same step replays the receipt', async () => {
    const a = await actors(env, api, 'org-opt-6', { allowedActions: ['optimization.reject'], budgetCeilingMinor: 0, currency: 'GBP' });
    const launched = await launchPlan(
      env,
      api,
      [
        { channel: 'ctv', adapterKey: 'sandbox-ctv', budgetMinor: 10_000 },
        { channel: 'dooh', adapterKey: 'sandbox-dooh', budgetMinor: 5_091 },
      ],
      'org-opt-6',
    );
    await waitForBooking(api, launched.token, launched.booking.id, allDefinite);
    const [o] = await list(a.human, launched.campaignId);

    const unbound = await decide(a.agent, o!.id, 'reject');
    expect(unbound.status).toBe(403);
    expect(await json(unbound)).toMatchObject({ code: 'execution_binding_required' });
    expect((await decide(a.agent, o!.id, 'accept')).status).toBe(403);
    expect((await list(a.human, launched.campaignId))[0]!.status).toBe('open');

    const prepared = await prepare(api, a.agent, 'optimization.reject', { optimizationId: o!.id }, 0);
    expect(prepared.status).toBe(201);
    const p = await json<Prepared>(prepared);
    expect(p.commitment).toMatchObject({ budgetMinor: 0, currency: 'GBP' });
    const approved = await post(api, a.human, `/api/v1/agent/approvals/${p.approvalId}/approve`, { expectedActionDigest: p.actionDigest });
    const stepId = (await json<{ executeStep: { id: string } }>(approved)).executeStep.id;
    const bound = { [STEP]: stepId, [DIGEST]: p.actionDigest };

    const done = await decide(a.agent, o!.id, 'reject', bound);
    expect(done.status).toBe(200);
    const first = await json<{ optimization: Optimization & { decidedBy: string } }>(done);
    expect(first.optimization).toMatchObject({ status: 'rejected', decidedBy: 'org-opt-6-lead|agent:planner-bot' });
    const replay = await decide(a.agent, o!.id, 'reject', bound);
    expect(replay.status).toBe(200);
    expect(replay.headers.get('x-flightdeck-receipt')).toBe('replayed');
    expect(await json(replay)).toEqual(first);
    // A person rejecting it again is the ordinary 409.
    expect((await decide(a.human, o!.id, 'reject')).status).toBe(409);
    // The run is as visible as the suggestion: not to a caller whose product cannot see the campaign.
    expect((await api.fetch(`/api/v1/agent/runs/${p.runId}`, { token: a.human })).status).toBe(200);
    const ctvOnly = await env.issuer.token({ org: 'org-opt-6', user: 'org-opt-6-lead', product: 'flightdeck-ctv' });
    expect((await api.fetch(`/api/v1/agent/runs/${p.runId}`, { token: ctvOnly })).status).toBe(404);
  });

  test("another tenant's optimization is a 404 identical to one that never existed, for listing, deciding and preparing", async () => {
    const { token, campaignId } = await withRejectedLine('org-opt-7');
    const [o] = await list(token, campaignId);
    const stranger = await env.issuer.token({ org: 'org-opt-8', user: 'someone', permissions: ['agent:approve'] });
    // Same tenant, but a product that does not cover the campaign's channels.
    const outOfProduct = await env.issuer.token({ org: 'org-opt-7', user: 'org-opt-7-buyer', product: 'flightdeck-dooh' });
    const before = await optimizationRows();
    const pairs = [
      [await decide(outOfProduct, o!.id, 'reject'), await decide(outOfProduct, randomUUID(), 'reject')],
      [
        await api.fetch(`/api/v1/campaigns/${campaignId}/optimizations`, { token: outOfProduct }),
        await api.fetch(`/api/v1/campaigns/${randomUUID()}/optimizations`, { token: outOfProduct }),
      ],
      [await decide(stranger, o!.id, 'reject'), await decide(stranger, randomUUID(), 'reject')],
      [await decide(stranger, o!.id, 'accept'), await decide(stranger, 'not-a-uuid', 'accept')],
      [
        await api.fetch(`/api/v1/campaigns/${campaignId}/optimizations`, { token: stranger }),
        await api.fetch(`/api/v1/campaigns/${randomUUID()}/optimizations`, { token: stranger }),
      ],
      [
        await prepare(api, stranger, 'optimization.reject', { optimizationId: o!.id }, 0),
        await prepare(api, stranger, 'optimization.reject', { optimizationId: randomUUID() }, 0),
      ],
    ];
    for (const [foreign, never] of pairs) {
      expect(foreign!.status).toBe(404);
      expect(never!.status).toBe(404);
      expect(withoutRequestId(await json(foreign!))).toEqual(withoutRequestId(await json(never!)));
    }
    expect(await optimizationRows()).toEqual(before);
    expect((await decide('', o!.id, 'reject')).status).toBe(401);
  });

  test('concurrent rejections of one suggestion: exactly one succeeds, the rest are 409s', async () => {
    const { token, campaignId } = await withRejectedLine('org-opt-10');
    const [o] = await list(token, campaignId);
    const results = await Promise.all(Array.from({ length: 6 }, () => decide(token, o!.id, 'reject')));
    expect(results.map((r) => r.status).sort()).toEqual([200, 409, 409, 409, 409, 409]);
  });

  test('a suggestion whose facts changed at the same plan version is stale: accepting it is a 409 and the plan is untouched', async () => {
    const { token, campaignId, planId, booking } = await withRejectedLine('org-opt-11');
    const [o] = await list(token, campaignId);
    // The rejected line is found confirmed after all (as a reconciliation would record it).
    const dooh = booking.lines.find((l) => l.channel === 'dooh')!;
    await env.db('booking_lines').where({ id: dooh.id }).update({ status: 'confirmed', confirmed_at: new Date() });
    const res = await decide(token, o!.id, 'accept');
    expect(res.status).toBe(409);
    expect(await json(res)).toMatchObject({ code: 'optimization_stale' });
    expect((await planOf(token, planId)).version).toBe(1);
  });

  test('the reject and accept routes take no body and no query: a 400 that changes nothing', async () => {
    const { token, campaignId } = await withRejectedLine('org-opt-9');
    const [o] = await list(token, campaignId);
    const before = await optimizationRows();
    const withBody = await post(api, token, `/api/v1/optimizations/${o!.id}/reject`, { reason: 'no' });
    expect(withBody.status).toBe(400);
    const withQuery = await api.fetch(`/api/v1/optimizations/${o!.id}/reject?force=1`, { method: 'POST', token });
    expect(withQuery.status).toBe(400);
    expect((await post(api, token, `/api/v1/optimizations/${o!.id}/accept`, {})).status).toBe(400);
    expect(await optimizationRows()).toEqual(before);
  });
});
