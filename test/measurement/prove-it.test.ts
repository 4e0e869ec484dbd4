import { randomUUID } from 'node:crypto';
import { addDays } from '../../shared/dates';
import { createTestEnv, json, type TestApi, type TestEnv } from '../support/api';
import { post } from '../support/bookings';
import { syntheticPanel, type PanelOptions } from './synthetic';
import { campaignOf, designBody, importPanel, measurementState, registerDesign, withoutRequestId } from './support';

let env: TestEnv;
let api: TestApi;
beforeAll(async () => {
  env = await createTestEnv();
  api = await env.api();
});
afterAll(() => env.close());

interface Evidence {
  id: string;
  designId: string;
  look: 'interim' | 'final';
  method: string;
  design: { id: string; testMarket: string; controlMarkets: string[]; exposureStart: string; check: { minimumDetectableLiftPct: number } };
  periods: { fit: { weeks: number }; exposure: { weeks: number }; exposureWeeksRegistered: number };
  fit: { ratio: number; degreesOfFreedom: number };
  estimate: {
    liftPct: number;
    liftPctInterval: [number, number | null];
    incremental: number;
    incrementalInterval: [number, number];
    actualTotal: number;
    counterfactualTotal: number;
    intervalLevel: number;
    alternative: string;
    conclusion: string | null;
    pValue: number | null;
  };
  counterfactual: Array<{ date: string; actual: number; counterfactual: number }>;
}

const proveIt = (token: string, campaignId: string, body?: unknown) => post(api, token, `/api/v1/campaigns/${campaignId}/prove-it`, body);

/** A campaign with the panel's history, a design registered on it before exposure, and `exposureWeeks` of exposure imported. */
async function registeredStudy(token: string, o: PanelOptions, design: Record<string, unknown> = {}, exposureWeeks = 4, overrides = {}) {
  const panel = syntheticPanel(o);
  const campaignId = await campaignOf(api, token, overrides);
  await importPanel(api, token, campaignId, panel, { to: addDays(panel.exposureStart, -1) });
  const res = await registerDesign(api, token, campaignId, designBody(panel, design));
  const body = await json<{ design: { id: string }; code?: string; designId?: string }>(res);
  if (exposureWeeks > 0)
    await importPanel(api, token, campaignId, panel, {
      from: panel.exposureStart,
      to: addDays(panel.exposureStart, 7 * exposureWeeks - 1),
    });
  return { campaignId, panel, status: res.status, designId: body.design?.id ?? body.designId! };
}

describe('POST /api/v1/campaigns/{id}/prove-it', () => {
  test('a registered design, evaluated after its exposure: lift, intervals, p-value, conclusion, counterfactual and design, stored once', async () => {
    const human = await env.issuer.token({ org: 'org-lift-1', user: 'analyst' });
    const { campaignId, panel, designId } = await registeredStudy(human, { seed: 7, noise: 0.05, lift: 0.2 });
    const res = await proveIt(human, campaignId, { exposureStart: panel.exposureStart });
    expect(res.status).toBe(201);
    const { evidence } = await json<{ evidence: Evidence }>(res);
    expect(evidence).toMatchObject({ designId, look: 'final', method: 'time-based-regression' });
    expect(evidence.design).toMatchObject({ id: designId, testMarket: 'london', exposureStart: panel.exposureStart });
    expect(evidence.periods).toMatchObject({ fit: { weeks: 8 }, exposure: { weeks: 4 }, exposureWeeksRegistered: 4 });
    const e = evidence.estimate;
    expect(e).toMatchObject({ conclusion: 'lift-detected', alternative: 'two-sided', intervalLevel: 0.95 });
    expect(e.pValue!).toBeLessThan(0.05);
    const truth = 100 * (panel.treatedPostTotal / panel.untreatedPostTotal - 1);
    expect(e.liftPctInterval[0]).toBeLessThan(truth);
    expect(e.liftPctInterval[1]!).toBeGreaterThan(truth);
    // The lift-% interval is the exact image of the incremental one: [Σy/(Σŷ+h) − 1, Σy/(Σŷ−h) − 1].
    const h = (e.incrementalInterval[1] - e.incrementalInterval[0]) / 2;
    expect(e.liftPctInterval[0]).toBeCloseTo(100 * (e.actualTotal / (e.counterfactualTotal + h) - 1), 2);
    expect(e.liftPctInterval[1]!).toBeCloseTo(100 * (e.actualTotal / (e.counterfactualTotal - h) - 1), 2);
    expect(evidence.counterfactual).toHaveLength(28);
    expect(evidence.counterfactual.reduce((s, d) => s + d.counterfactual, 0)).toBeCloseTo(e.counterfactualTotal, 1);

    const again = await json<{ evidence: unknown }>(await api.fetch(`/api/v1/lift-evidence/${evidence.id}`, { token: human }));
    expect(again.evidence).toEqual(evidence);
    // Asking again, by design id or by the spec's body, reads the same evaluation and stores nothing.
    const before = await measurementState(env);
    for (const body of [{ designId }, { exposureStart: panel.exposureStart, testMarket: 'london', expectedLiftPct: 10 }]) {
      const repeat = await proveIt(human, campaignId, body);
      expect(repeat.status).toBe(200);
      expect((await json<{ evidence: Evidence }>(repeat)).evidence).toEqual(evidence);
    }
    expect(await measurementState(env)).toEqual(before);
    const list = await json<{ evidence: Array<{ id: string }> }>(
      await api.fetch(`/api/v1/campaigns/${campaignId}/lift-evidence`, { token: human }),
    );
    expect(list.evidence.map((x) => x.id)).toEqual([evidence.id]);
  });

  test('the final evaluation is made once even when asked for twice at the same moment', async () => {
    const human = await env.issuer.token({ org: 'org-lift-2', user: 'analyst' });
    const { campaignId, designId } = await registeredStudy(human, { seed: 8, noise: 0.05 });
    const answers = await Promise.all([proveIt(human, campaignId, { designId }), proveIt(human, campaignId, { designId })]);
    expect(answers.map((r) => r.status).sort()).toEqual([200, 201]);
    const ids = await Promise.all(answers.map(async (r) => (await json<{ evidence: Evidence }>(r)).evidence.id));
    expect(ids[0]).toBe(ids[1]);
    expect(await env.db('lift_evidence').where({ design_id: designId })).toHaveLength(1);
  });

  test('before every exposure week is in, a look is interim: the estimate so far, no p-value, no conclusion; then the final look', async () => {
    const human = await env.issuer.token({ org: 'org-lift-3', user: 'analyst' });
    const { campaignId, panel, designId } = await registeredStudy(human, { seed: 9, noise: 0.05, lift: 0.3 }, {}, 2);
    const interim = await proveIt(human, campaignId, { designId });
    expect(interim.status).toBe(201);
    const { evidence } = await json<{ evidence: Evidence }>(interim);
    expect(evidence.look).toBe('interim');
    expect(evidence.periods).toMatchObject({ exposure: { weeks: 2 }, exposureWeeksRegistered: 4 });
    expect(evidence.estimate.pValue).toBeNull();
    expect(evidence.estimate.conclusion).toBeNull();
    expect(evidence.estimate.liftPct).toBeGreaterThan(15);
    expect(evidence.counterfactual).toHaveLength(14);
    await importPanel(api, human, campaignId, panel, { from: addDays(panel.exposureStart, 14) });
    const final = await json<{ evidence: Evidence }>(await proveIt(human, campaignId, { designId }));
    expect(final.evidence).toMatchObject({ look: 'final', estimate: { conclusion: 'lift-detected' } });
    const looks = await env.db('lift_evidence').where({ design_id: designId }).orderBy('created_at').pluck('look');
    expect(looks).toEqual(['interim', 'final']);
  });

  test('while the registered end is still ahead a look is interim, even with every exposure week imported', async () => {
    const human = await env.issuer.token({ org: 'org-lift-4', user: 'analyst' });
    const { campaignId, designId } = await registeredStudy(human, { seed: 10, noise: 0.05, start: '2099-01-05' });
    const res = await proveIt(human, campaignId, { designId });
    expect(res.status).toBe(201);
    expect((await json<{ evidence: Evidence }>(res)).evidence).toMatchObject({
      look: 'interim',
      periods: { exposure: { weeks: 4 } },
      estimate: { conclusion: null, pValue: null },
    });
  });

  test("the spec's body registers its design when none exists and nothing is exposed yet: 202, with the defaults in force", async () => {
    const human = await env.issuer.token({ org: 'org-lift-5', user: 'analyst' });
    // History up to the campaign's start date (2099-03-01), nothing after it.
    const panel = syntheticPanel({ seed: 11, noise: 0.05, start: addDays('2099-03-01', -98) });
    const campaignId = await campaignOf(api, human);
    await importPanel(api, human, campaignId, panel, { to: '2099-02-28' });
    const res = await proveIt(human, campaignId, {});
    expect(res.status).toBe(202);
    const { design } = await json<{ design: Record<string, unknown> }>(res);
    // london, 15%, from the campaign's start for the whole weeks up to its end (2099-03-31).
    expect(design).toMatchObject({
      status: 'registered',
      testMarket: 'london',
      expectedLiftPct: 15,
      exposureStart: '2099-03-01',
      exposureEnd: '2099-03-28',
      fitWeeks: 8,
    });
    // It is the registered design now: asking again names it (nothing is exposed yet), and a different expectation is refused.
    const before = await measurementState(env);
    const again = await proveIt(human, campaignId, {});
    expect(again.status).toBe(422);
    expect(await json(again)).toMatchObject({ code: 'insufficient_data', reason: 'no_post_period_outcomes', designId: design.id });
    const changed = await proveIt(human, campaignId, { expectedLiftPct: 30 });
    expect(changed.status).toBe(409);
    expect(await json(changed)).toMatchObject({ code: 'design_mismatch', errors: [{ path: 'body.expectedLiftPct' }] });
    expect(await measurementState(env)).toEqual(before);
  });

  test("the spec's body naming a design no one registered before exposure data arrived is refused (409); nothing is stored", async () => {
    const human = await env.issuer.token({ org: 'org-lift-6', user: 'analyst' });
    const panel = syntheticPanel({ seed: 12, noise: 0.05, lift: 0.2 });
    const campaignId = await campaignOf(api, human);
    await importPanel(api, human, campaignId, panel);
    const before = await measurementState(env);
    const res = await proveIt(human, campaignId, { exposureStart: panel.exposureStart, expectedLiftPct: 10 });
    expect(res.status).toBe(409);
    expect(await json(res)).toMatchObject({ code: 'exposure_data_present' });
    expect(await measurementState(env)).toEqual(before);
  });

  test('a request that changes the registered design is 409 design_mismatch, naming what it changes; nothing is stored', async () => {
    const human = await env.issuer.token({ org: 'org-lift-7', user: 'analyst' });
    const { campaignId, panel, designId } = await registeredStudy(human, { seed: 13, noise: 0.05 });
    const before = await measurementState(env);
    for (const [body, path] of [
      [{ exposureStart: panel.exposureStart, expectedLiftPct: 5 }, 'body.expectedLiftPct'],
      [{ designId, testMarket: 'anglia' }, 'body.testMarket'],
      [{ designId, exposureStart: addDays(panel.exposureStart, 7) }, 'body.exposureStart'],
    ] as const) {
      const res = await proveIt(human, campaignId, body);
      expect(res.status).toBe(409);
      expect(await json(res)).toMatchObject({ code: 'design_mismatch', errors: [{ path }] });
    }
    expect(await measurementState(env)).toEqual(before);
  });

  test('an underpowered design is refused as underpowered however it is asked, after exposure too, and nothing is stored', async () => {
    const human = await env.issuer.token({ org: 'org-lift-8', user: 'analyst' });
    const { campaignId, panel, status, designId } = await registeredStudy(
      human,
      { seed: 14, noise: 0.1, lift: 0.06 },
      { expectedLiftPct: 6 },
    );
    expect(status).toBe(422);
    const before = await measurementState(env);
    for (const body of [{ designId }, { exposureStart: panel.exposureStart }, { exposureStart: panel.exposureStart, expectedLiftPct: 6 }]) {
      const res = await proveIt(human, campaignId, body);
      expect(res.status).toBe(422);
      expect(await json(res)).toMatchObject({ code: 'underpowered', reason: 'mde_above_expected_lift', designId, expectedLiftPct: 6 });
    }
    expect(await measurementState(env)).toEqual(before);
  });

  test('missing fit-window outcomes and an exposure with no complete week are refused as insufficient_data; nothing is stored', async () => {
    const human = await env.issuer.token({ org: 'org-lift-9', user: 'analyst' });
    const { campaignId, panel, designId } = await registeredStudy(human, { seed: 15, noise: 0.05 }, {}, 0);
    await importPanel(api, human, campaignId, panel, { from: panel.exposureStart, to: addDays(panel.exposureStart, 5) });
    let before = await measurementState(env);
    const partial = await proveIt(human, campaignId, { designId });
    expect(partial.status).toBe(422);
    expect(await json(partial)).toMatchObject({ code: 'insufficient_data', reason: 'no_post_period_outcomes', exposureWeeks: 0 });
    expect(await measurementState(env)).toEqual(before);

    // A day of the fit window deleted from one control: the evaluation says which market lacks how many days.
    await importPanel(api, human, campaignId, panel, { from: addDays(panel.exposureStart, 6) });
    await env
      .db('campaign_outcomes')
      .where({ campaign_id: campaignId, market: 'central' })
      .whereRaw('date = ?::date', [addDays(panel.exposureStart, -3)])
      .delete();
    before = await measurementState(env);
    const missing = await proveIt(human, campaignId, { designId });
    expect(missing.status).toBe(422);
    expect(await json(missing)).toMatchObject({ code: 'insufficient_data', reason: 'missing_fit_outcomes', missingDays: { central: 1 } });
    expect(await measurementState(env)).toEqual(before);
  });

  test('a decline is decline-detected under a two-sided design, and no detectable effect (one-sided p > ½) under a design testing for lift', async () => {
    const human = await env.issuer.token({ org: 'org-lift-10', user: 'analyst' });
    const twoSided = await registeredStudy(human, { seed: 16, noise: 0.05, lift: -0.2 });
    const a = (await json<{ evidence: Evidence }>(await proveIt(human, twoSided.campaignId, { designId: twoSided.designId }))).evidence;
    expect(a.estimate).toMatchObject({ conclusion: 'decline-detected', alternative: 'two-sided' });
    expect(a.estimate.liftPctInterval[1]!).toBeLessThan(0);
    const oneSided = await registeredStudy(human, { seed: 16, noise: 0.05, lift: -0.2 }, { alternative: 'greater' });
    const b = (await json<{ evidence: Evidence }>(await proveIt(human, oneSided.campaignId, { designId: oneSided.designId }))).evidence;
    expect(b.estimate).toMatchObject({ conclusion: 'no-detectable-effect', alternative: 'greater', intervalLevel: 0.9 });
    expect(b.estimate.pValue!).toBeGreaterThan(0.5);
    expect(b.estimate.liftPct).toBeCloseTo(a.estimate.liftPct, 6);
  });

  test.each([
    ['an unknown field', { market: 'london' }],
    ['a zero expected lift', { expectedLiftPct: 0 }],
    ['a negative expected lift', { expectedLiftPct: -5 }],
    ['a string expected lift', { expectedLiftPct: '15' }],
    ['an expected lift above 1000%', { expectedLiftPct: 1001 }],
    ['an exposure start that is not YYYY-MM-DD', { exposureStart: '02/03/2026' }],
    ['an exposure start that is not a calendar day', { exposureStart: '2026-02-30' }],
    ['an exposure start before 1900', { exposureStart: '0000-01-01' }],
    ['an empty test market', { testMarket: '' }],
    ['an over-long test market', { testMarket: 'x'.repeat(201) }],
    ['an empty design id', { designId: '' }],
  ])('%s is a 400 and stores nothing', async (_name, body) => {
    const human = await env.issuer.token({ org: 'org-lift-11', user: 'analyst' });
    const campaignId = await campaignOf(api, human);
    const before = await measurementState(env);
    const res = await proveIt(human, campaignId, body);
    expect(res.status).toBe(400);
    expect(await measurementState(env)).toEqual(before);
  });

  test("another tenant's campaign, evidence and design, and a design of another campaign, are 404s identical to ids that never existed", async () => {
    const owner = await env.issuer.token({ org: 'org-lift-12', user: 'analyst' });
    const stranger = await env.issuer.token({ org: 'org-lift-13', user: 'analyst' });
    const { campaignId, designId } = await registeredStudy(owner, { seed: 17, noise: 0.05, lift: 0.2 });
    const { evidence } = await json<{ evidence: { id: string } }>(await proveIt(owner, campaignId, { designId }));
    const otherCampaign = await campaignOf(api, owner);
    const before = await measurementState(env);
    const pairs = [
      [await proveIt(stranger, campaignId, { designId }), await proveIt(stranger, randomUUID(), { designId })],
      [await proveIt(owner, otherCampaign, { designId }), await proveIt(owner, otherCampaign, { designId: randomUUID() })],
      [await proveIt(owner, otherCampaign, { designId: 'not-a-uuid' }), await proveIt(owner, otherCampaign, { designId: randomUUID() })],
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
