import { randomUUID } from 'node:crypto';
import { createTestEnv, json, type TestApi, type TestEnv } from '../support/api';
import { post } from '../support/bookings';
import { syntheticPanel, type PanelOptions } from './synthetic';
import { campaignOf, measurementState, rowsJson, sendOutcomes, withoutRequestId } from './support';

let env: TestEnv;
let api: TestApi;
beforeAll(async () => {
  env = await createTestEnv();
  api = await env.api();
});
afterAll(() => env.close());

/** A campaign whose outcomes are a synthetic panel; returns its id and exposure start. */
async function campaignWithPanel(token: string, o: PanelOptions, only?: string[]) {
  const campaignId = await campaignOf(api, token);
  const panel = syntheticPanel(o);
  const rows = Object.entries(panel.markets)
    .filter(([m]) => !only || only.includes(m))
    .flatMap(([market, values]) => values.map((value, t) => ({ date: panel.dates[t], market, metric: 'conversions', value })));
  const res = await sendOutcomes(api, token, campaignId, rowsJson(rows));
  if (res.status !== 201) throw new Error(`import failed: ${res.status} ${await res.text()}`);
  return { campaignId, exposureStart: panel.exposureStart, panel };
}

interface Evidence {
  id: string;
  method: string;
  design: { controlMarkets: string[]; prePeriod: { days: number }; postPeriod: { days: number }; minimumDetectableLiftPct: number };
  estimate: { liftPctInterval: [number, number]; conclusion: string; pValue: number };
  counterfactual: unknown[];
}

const proveIt = (token: string, campaignId: string, body?: unknown) => post(api, token, `/api/v1/campaigns/${campaignId}/prove-it`, body);

describe('POST /api/v1/campaigns/{id}/prove-it', () => {
  test('a powered design returns the lift with its interval, p-value, counterfactual and design, stored as evidence', async () => {
    const human = await env.issuer.token({ org: 'org-lift-1', user: 'analyst' });
    const { campaignId, exposureStart } = await campaignWithPanel(human, { seed: 7, lift: 0.2 });
    const res = await proveIt(human, campaignId, { exposureStart, expectedLiftPct: 10 });
    expect(res.status).toBe(201);
    const { evidence } = await json<{ evidence: Evidence }>(res);
    expect(evidence.method).toBe('time-based-regression');
    expect(evidence.design).toMatchObject({ testMarket: 'london', exposureStart, alpha: 0.05, power: 0.8, metric: 'conversions' });
    expect(evidence.design.controlMarkets).toHaveLength(6);
    expect(evidence.design.prePeriod.days).toBe(56);
    expect(evidence.design.postPeriod.days).toBe(28);
    expect(evidence.design.minimumDetectableLiftPct).toBeLessThan(10);
    const [lo, hi] = evidence.estimate.liftPctInterval;
    expect(lo).toBeLessThan(20);
    expect(hi).toBeGreaterThan(20);
    expect(evidence.estimate.conclusion).toBe('lift-detected');
    expect(evidence.estimate.pValue).toBeLessThan(0.05);
    expect(evidence.counterfactual).toHaveLength(28);
    const again = await json<{ evidence: unknown }>(await api.fetch(`/api/v1/lift-evidence/${evidence.id}`, { token: human }));
    expect(again.evidence).toEqual(evidence);
    const list = await json<{ evidence: Array<{ id: string }> }>(
      await api.fetch(`/api/v1/campaigns/${campaignId}/lift-evidence`, { token: human }),
    );
    expect(list.evidence.map((e) => e.id)).toEqual([evidence.id]);
  });

  test('an underpowered design is refused with the MDE, the expected lift and the days that would power it; nothing is stored', async () => {
    const human = await env.issuer.token({ org: 'org-lift-2', user: 'analyst' });
    const { campaignId, exposureStart } = await campaignWithPanel(human, { seed: 8, lift: 0.2, noise: 0.1, postDays: 7 });
    const before = await measurementState(env);
    const res = await proveIt(human, campaignId, { exposureStart, expectedLiftPct: 5 });
    expect(res.status).toBe(422);
    expect(res.headers.get('content-type')).toMatch(/problem\+json/);
    const problem = await json<Record<string, number | string>>(res);
    expect(problem).toMatchObject({ code: 'underpowered', expectedLiftPct: 5, postPeriodDays: 7, alpha: 0.05, power: 0.8 });
    expect(problem.minimumDetectableLiftPct).toBeGreaterThan(5);
    expect(problem.postPeriodDaysNeeded).toBeGreaterThan(7);
    expect(problem.detail).toMatch(/post-period days/);
    expect(await measurementState(env)).toEqual(before);
  });

  test.each([
    ['no outcomes at all', 'no_outcomes', undefined, {}],
    ['an unknown test market', 'unknown_test_market', ['london', 'anglia', 'central'], { testMarket: 'atlantis' }],
    ['a single control market', 'too_few_control_markets', ['london', 'anglia'], {}],
    ['too few pre-period days', 'too_few_pre_period_days', ['london', 'anglia', 'central'], { exposureStart: '2026-01-15' }],
    ['no post-period outcomes yet', 'no_post_period_outcomes', ['london', 'anglia', 'central'], { exposureStart: '2027-01-01' }],
  ])('%s is refused as insufficient_data (%s) and stores nothing', async (_name, reason, markets, body) => {
    const human = await env.issuer.token({ org: 'org-lift-3', user: 'analyst' });
    const campaignId = markets ? (await campaignWithPanel(human, { seed: 9 }, markets)).campaignId : await campaignOf(api, human);
    const before = await measurementState(env);
    const res = await proveIt(human, campaignId, { exposureStart: '2026-03-02', ...body });
    expect(res.status).toBe(422);
    expect(await json(res)).toMatchObject({ code: 'insufficient_data', reason, expectedLiftPct: 15 });
    expect(await measurementState(env)).toEqual(before);
  });

  test('the body defaults to london, a 15% expected lift and the campaign start date', async () => {
    const human = await env.issuer.token({ org: 'org-lift-4', user: 'analyst' });
    const { campaignId } = await campaignWithPanel(human, { seed: 10 });
    // The campaign starts in 2099: every outcome is pre-period, so the default exposure start has no post-period yet.
    const res = await api.fetch(`/api/v1/campaigns/${campaignId}/prove-it`, { method: 'POST', token: human });
    expect(res.status).toBe(422);
    expect(await json(res)).toMatchObject({ reason: 'no_post_period_outcomes', expectedLiftPct: 15, prePeriodDays: 84 });
  });

  test.each([
    ['an unknown field', { market: 'london' }],
    ['a zero expected lift', { expectedLiftPct: 0 }],
    ['a negative expected lift', { expectedLiftPct: -5 }],
    ['a string expected lift', { expectedLiftPct: '15' }],
    ['an exposure start that is not YYYY-MM-DD', { exposureStart: '02/03/2026' }],
    ['an exposure start that is not a calendar day', { exposureStart: '2026-02-30' }],
    ['an empty test market', { testMarket: '' }],
    ['an over-long test market', { testMarket: 'x'.repeat(201) }],
  ])('%s is a 400 and stores nothing', async (_name, body) => {
    const human = await env.issuer.token({ org: 'org-lift-5', user: 'analyst' });
    const { campaignId } = await campaignWithPanel(human, { seed: 11 }, ['london', 'anglia', 'central']);
    const before = await measurementState(env);
    const res = await proveIt(human, campaignId, body);
    expect(res.status).toBe(400);
    expect(await measurementState(env)).toEqual(before);
  });

  test("another tenant's campaign and evidence are 404s identical to ids that never existed", async () => {
    const owner = await env.issuer.token({ org: 'org-lift-6', user: 'analyst' });
    const stranger = await env.issuer.token({ org: 'org-lift-7', user: 'analyst' });
    const { campaignId, exposureStart } = await campaignWithPanel(owner, { seed: 12, lift: 0.2 });
    const { evidence } = await json<{ evidence: { id: string } }>(await proveIt(owner, campaignId, { exposureStart, expectedLiftPct: 10 }));
    const before = await measurementState(env);
    const pairs = [
      [await proveIt(stranger, campaignId, { exposureStart }), await proveIt(stranger, randomUUID(), { exposureStart })],
      [
        await api.fetch(`/api/v1/lift-evidence/${evidence.id}`, { token: stranger }),
        await api.fetch(`/api/v1/lift-evidence/${randomUUID()}`, { token: stranger }),
      ],
      [
        await api.fetch(`/api/v1/campaigns/${campaignId}/lift-evidence`, { token: stranger }),
        await api.fetch(`/api/v1/campaigns/${randomUUID()}/lift-evidence`, { token: stranger }),
      ],
    ];
    for (const [foreign, never] of pairs) {
      expect(foreign!.status).toBe(404);
      expect(never!.status).toBe(404);
      expect(withoutRequestId(await json(foreign!))).toEqual(withoutRequestId(await json(never!)));
    }
    expect(await measurementState(env)).toEqual(before);
    expect((await proveIt('', campaignId, {})).status).toBe(401);
  });
});
