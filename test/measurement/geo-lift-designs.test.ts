import { randomUUID } from 'node:crypto';
import { addDays } from '../../shared/dates';
import { lockCampaignOutcomes } from '../../shared/measurement/outcomes';
import { createTestEnv, json, type TestApi, type TestEnv } from '../support/api';
import { until } from '../support/wait';
import { syntheticPanel, type PanelOptions, type SyntheticPanel } from './synthetic';
import { campaignOf, designBody, importPanel, measurementState, registerDesign, withoutRequestId } from './support';

let env: TestEnv;
let api: TestApi;
beforeAll(async () => {
  env = await createTestEnv();
  api = await env.api();
});
afterAll(() => env.close());

interface Design {
  id: string;
  status: string;
  testMarket: string;
  controlMarkets: string[];
  controlMarketsNamed: boolean;
  metric: string;
  exposureStart: string;
  exposureEnd: string;
  fitWeeks: number;
  expectedLiftPct: number;
  alpha: number;
  power: number;
  alternative: string;
  check: {
    designPeriod: { from: string; to: string; weeks: number };
    fitPeriod: { from: string; to: string; weeks: number };
    exposurePeriod: { from: string; to: string; weeks: number };
    minimumDetectableLiftPct: number;
    exposureWeeksNeeded: number | null;
    fitWeeksNeeded: number | null;
    diagnostics: Record<string, unknown>;
  };
  refusal: { code: string; reason: string } | null;
  registeredBy: string;
  agentClientId: string | null;
}

/** A campaign holding the panel's outcomes before exposure (every market, or only `markets`). */
async function campaignBeforeExposure(token: string, o: PanelOptions, range: { markets?: string[]; from?: string } = {}) {
  const panel = syntheticPanel(o);
  const campaignId = await campaignOf(api, token);
  await importPanel(api, token, campaignId, panel, { ...range, to: addDays(panel.exposureStart, -1) });
  return { campaignId, panel };
}

const listDesigns = async (token: string, campaignId: string) =>
  (await json<{ designs: Design[] }>(await api.fetch(`/api/v1/campaigns/${campaignId}/geo-lift-designs`, { token }))).designs;

const register = (token: string, campaignId: string, body: unknown) => registerDesign(api, token, campaignId, body);

/** Whether some request is waiting for an advisory lock (the campaign's outcomes lock: nothing else takes one here). */
const waitingForLock = async () =>
  (await env.db.raw(`select count(*)::int as n from pg_locks where locktype = 'advisory' and not granted`)).rows[0].n > 0;

describe('POST /api/v1/campaigns/{id}/geo-lift-designs', () => {
  test('a design registered before exposure is power-checked on the weeks before its fit window, kept, and listed', async () => {
    const human = await env.issuer.token({ org: 'org-design-1', user: 'analyst' });
    const { campaignId, panel } = await campaignBeforeExposure(human, { seed: 7, noise: 0.05 });
    const res = await register(human, campaignId, designBody(panel));
    expect(res.status).toBe(201);
    const { design } = await json<{ design: Design }>(res);
    expect(design).toMatchObject({
      status: 'registered',
      testMarket: 'london',
      controlMarketsNamed: false,
      metric: 'conversions',
      exposureStart: panel.exposureStart,
      exposureEnd: panel.exposureEnd,
      fitWeeks: 8,
      expectedLiftPct: 10,
      alpha: 0.05,
      power: 0.8,
      alternative: 'two-sided',
      refusal: null,
      registeredBy: 'analyst',
      agentClientId: null,
    });
    expect([...design.controlMarkets].sort()).toEqual(
      Object.keys(panel.markets)
        .filter((m) => m !== 'london')
        .sort(),
    );
    // Eight fit weeks right before exposure, and the six weeks before those to check the design on.
    expect(design.check.fitPeriod).toEqual({ from: addDays(panel.exposureStart, -56), to: addDays(panel.exposureStart, -1), weeks: 8 });
    expect(design.check.designPeriod).toEqual({ from: panel.dates[0], to: addDays(panel.exposureStart, -57), weeks: 6 });
    expect(design.check.exposurePeriod).toEqual({ from: panel.exposureStart, to: panel.exposureEnd, weeks: 4 });
    expect(design.check.minimumDetectableLiftPct).toBeLessThan(10);
    expect(design.check.diagnostics).toMatchObject({ aaTest: { fitWeeks: 3, placeboWeeks: 3 } });
    expect(design.check.diagnostics.correlation as number).toBeGreaterThan(0.5);
    expect(await listDesigns(human, campaignId)).toEqual([design]);
  });

  test('an identical registration returns the stored design (200) and stores nothing; controls named in another order are the same design', async () => {
    const human = await env.issuer.token({ org: 'org-design-2', user: 'analyst' });
    const { campaignId, panel } = await campaignBeforeExposure(human, { seed: 8, noise: 0.05 });
    const body = designBody(panel, { controlMarkets: ['anglia', 'central', 'granada'] });
    const first = await json<{ design: Design }>(await register(human, campaignId, body));
    const before = await measurementState(env);
    const again = await register(human, campaignId, { ...body, controlMarkets: ['granada', 'anglia', 'central'] });
    expect(again.status).toBe(200);
    expect(await json(again)).toEqual(first);
    expect(first.design.controlMarketsNamed).toBe(true);
    expect(await measurementState(env)).toEqual(before);
  });

  test('a registered design cannot be changed: 409 design_registered names each changed field; nothing is stored', async () => {
    const human = await env.issuer.token({ org: 'org-design-3', user: 'analyst' });
    const { campaignId, panel } = await campaignBeforeExposure(human, { seed: 9, noise: 0.05 });
    expect((await register(human, campaignId, designBody(panel))).status).toBe(201);
    const before = await measurementState(env);
    for (const [change, field] of [
      [{ expectedLiftPct: 8 }, 'expectedLiftPct'],
      [{ exposureEnd: addDays(panel.exposureEnd, 7) }, 'exposureEnd'],
      [{ fitWeeks: 10 }, 'fitWeeks'],
      [{ alpha: 0.01 }, 'alpha'],
      [{ controlMarkets: ['anglia', 'central'] }, 'controlMarkets'],
      [{ alternative: 'greater' }, 'alternative'],
    ] as const) {
      const res = await register(human, campaignId, designBody(panel, change));
      expect(res.status).toBe(409);
      const problem = await json<{ code: string; errors: Array<{ path: string }> }>(res);
      expect(problem.code).toBe('design_registered');
      expect(problem.errors.map((e) => e.path)).toEqual([`body.${field}`]);
    }
    expect(await measurementState(env)).toEqual(before);
  });

  test('registration is refused once outcomes on or after the exposure start are stored, even a day of one market (409); nothing is stored', async () => {
    const human = await env.issuer.token({ org: 'org-design-4', user: 'analyst' });
    const { campaignId, panel } = await campaignBeforeExposure(human, { seed: 10, noise: 0.05 });
    await importPanel(api, human, campaignId, panel, { from: panel.exposureStart, to: panel.exposureStart, markets: ['anglia'] });
    const before = await measurementState(env);
    const res = await register(human, campaignId, designBody(panel));
    expect(res.status).toBe(409);
    expect(await json(res)).toMatchObject({ code: 'exposure_data_present' });
    expect(await measurementState(env)).toEqual(before);
  });

  test('a second design of the same market and metric whose exposure overlaps a registered one is 409 design_overlaps', async () => {
    const human = await env.issuer.token({ org: 'org-design-5', user: 'analyst' });
    const { campaignId, panel } = await campaignBeforeExposure(human, { seed: 11, noise: 0.05 });
    expect((await register(human, campaignId, designBody(panel))).status).toBe(201);
    const before = await measurementState(env);
    const later = designBody(panel, { exposureStart: addDays(panel.exposureStart, 7), exposureEnd: addDays(panel.exposureEnd, 7) });
    const res = await register(human, campaignId, later);
    expect(res.status).toBe(409);
    expect(await json(res)).toMatchObject({ code: 'design_overlaps' });
    expect(await measurementState(env)).toEqual(before);
  });

  test('an underpowered design is refused and kept as the answer: asking again rosier is 409, the design the refusal suggests is registered', async () => {
    const human = await env.issuer.token({ org: 'org-design-6', user: 'analyst' });
    const { campaignId, panel } = await campaignBeforeExposure(human, { seed: 14, noise: 0.1 });
    const body = designBody(panel, { expectedLiftPct: 6 });
    const res = await register(human, campaignId, body);
    expect(res.status).toBe(422);
    expect(res.headers.get('content-type')).toMatch(/problem\+json/);
    const refusal = await json<Record<string, unknown> & { designId: string; minimumDetectableLiftPct: number }>(res);
    expect(refusal).toMatchObject({
      code: 'underpowered',
      reason: 'mde_above_expected_lift',
      expectedLiftPct: 6,
      alpha: 0.05,
      power: 0.8,
      alternative: 'two-sided',
      metric: 'conversions',
    });
    expect(refusal.minimumDetectableLiftPct).toBeGreaterThan(6);
    const [stored] = await listDesigns(human, campaignId);
    expect(stored).toMatchObject({ id: refusal.designId, status: 'underpowered', refusal: { code: 'underpowered' } });

    // The same question again gets the same answer, and stores nothing more.
    const before = await measurementState(env);
    const again = await register(human, campaignId, body);
    expect(again.status).toBe(422);
    expect((await json<{ designId: string }>(again)).designId).toBe(refusal.designId);
    for (const rosier of [{ expectedLiftPct: 20 }, { alpha: 0.1 }, { power: 0.6 }, { alternative: 'greater' }]) {
      const r = await register(human, campaignId, { ...body, ...rosier });
      expect(r.status).toBe(409);
      const problem = await json<{ code: string; errors: Array<{ path: string }> }>(r);
      expect(problem.code).toBe('power_target_relaxed');
      expect(problem.errors.map((e) => e.path)).toEqual([`body.${Object.keys(rosier)[0]}`]);
    }
    expect(await measurementState(env)).toEqual(before);

    // A longer exposure at the same power target is another design, checked afresh.
    const weeks = refusal.exposureWeeksNeeded as number;
    expect(weeks).toBeGreaterThan(4);
    const longer = await register(human, campaignId, { ...body, exposureEnd: addDays(panel.exposureStart, 7 * weeks - 1) });
    expect(longer.status).toBe(201);
    const { design } = await json<{ design: Design }>(longer);
    expect(design.check.minimumDetectableLiftPct).toBeLessThanOrEqual(6);
    expect((await listDesigns(human, campaignId)).map((d) => d.status)).toEqual(['registered', 'underpowered']);
  });

  test.each<[string, string, PanelOptions, { markets?: string[]; from?: string } | null, Record<string, unknown>]>([
    ['no outcomes at all', 'no_outcomes', { seed: 13 }, null, {}],
    ['an unknown test market', 'unknown_test_market', { seed: 13 }, {}, { testMarket: 'atlantis' }],
    ['an unknown control market', 'unknown_control_markets', { seed: 13 }, {}, { controlMarkets: ['anglia', 'atlantis'] }],
    ['a single control market', 'too_few_control_markets', { seed: 13 }, { markets: ['london', 'anglia'] }, {}],
    ['ten weeks of history', 'too_few_design_weeks', { seed: 13 }, { from: '2026-02-02' }, {}],
  ])('%s is refused as insufficient_data (%s); nothing is stored', async (_name, reason, o, range, extra) => {
    const human = await env.issuer.token({ org: 'org-design-7', user: 'analyst' });
    const panel = syntheticPanel(o);
    const campaignId = await campaignOf(api, human);
    if (range) await importPanel(api, human, campaignId, panel, { ...range, to: addDays(panel.exposureStart, -1) });
    const before = await measurementState(env);
    const res = await register(human, campaignId, designBody(panel, extra));
    expect(res.status).toBe(422);
    expect(await json(res)).toMatchObject({ code: 'insufficient_data', reason, expectedLiftPct: 10 });
    expect(await measurementState(env)).toEqual(before);
  });

  test.each<[string, string, (seed: number) => SyntheticPanel]>([
    [
      'controls that share no season with the test market',
      'controls_do_not_track',
      (seed) => syntheticPanel({ seed, season: 0, noise: 0.1 }),
    ],
    [
      'noise that persists for weeks (AR(1), ρ = 0.97)',
      'residuals_autocorrelated',
      (seed) => syntheticPanel({ seed: seed + 2, rho: 0.97 }),
    ],
    [
      'a test market that jumps 15% for the last three design weeks',
      'aa_test_failed',
      (seed) => {
        const p = syntheticPanel({ seed, noise: 0.05 });
        const from = p.dates.indexOf(p.exposureStart) - 56 - 21;
        p.markets.london = p.markets.london!.map((v, t) => (t >= from && t < from + 21 ? v * 1.15 : v));
        return p;
      },
    ],
  ])('%s fails a model check (%s): 422 with the diagnostics; nothing is stored', async (_name, reason, make) => {
    const human = await env.issuer.token({ org: 'org-design-8', user: 'analyst' });
    const panel = make(1);
    const campaignId = await campaignOf(api, human);
    await importPanel(api, human, campaignId, panel, { to: addDays(panel.exposureStart, -1) });
    const before = await measurementState(env);
    const res = await register(human, campaignId, designBody(panel, { expectedLiftPct: 50 }));
    expect(res.status).toBe(422);
    const problem = await json<{ code: string; reason: string; diagnostics: Record<string, number> }>(res);
    expect(problem).toMatchObject({ code: 'model_check_failed', reason });
    expect(Object.keys(problem.diagnostics).sort()).toEqual(
      ['aaTest', 'correlation', 'durbinWatson', 'modelledAutocorrelation', 'relativeNoise', 'residualAutocorrelation'].sort(),
    );
    expect(await measurementState(env)).toEqual(before);
  });

  test.each([
    ['an unknown field', { extra: 1 }],
    ['an exposure that is not whole weeks', { exposureEnd: '2026-05-09' }],
    ['an exposure of 53 weeks', { exposureEnd: addDays('2026-04-13', 7 * 53 - 1) }],
    ['an exposure that ends before it starts', { exposureEnd: '2026-04-06' }],
    ['an exposure start that is not a calendar day', { exposureStart: '2026-02-30' }],
    ['an exposure in year 0', { exposureStart: '0000-01-03', exposureEnd: '0000-01-09' }],
    ['three fit weeks', { fitWeeks: 3 }],
    ['53 fit weeks', { fitWeeks: 53 }],
    ['a fractional number of fit weeks', { fitWeeks: 8.5 }],
    ['α of zero', { alpha: 0 }],
    ['α above 0.2', { alpha: 0.3 }],
    ['power below 0.5', { power: 0.4 }],
    ['power of one', { power: 1 }],
    ['a zero expected lift', { expectedLiftPct: 0 }],
    ['an expected lift above 1000%', { expectedLiftPct: 1001 }],
    ['a string expected lift', { expectedLiftPct: '10' }],
    ['a one-sided test for a decline', { alternative: 'less' }],
    ['the test market among its controls', { controlMarkets: ['london', 'anglia'] }],
    ['a control named twice', { controlMarkets: ['anglia', 'anglia'] }],
    ['no controls in a named list', { controlMarkets: [] }],
    ['an unknown metric', { metric: 'sales' }],
    ['an empty test market', { testMarket: '' }],
  ])('%s is a 400 and stores nothing', async (_name, change) => {
    const human = await env.issuer.token({ org: 'org-design-9', user: 'analyst' });
    const panel = syntheticPanel({ seed: 14, noise: 0.05 });
    const campaignId = await campaignOf(api, human);
    await importPanel(api, human, campaignId, panel, { to: addDays(panel.exposureStart, -1) });
    const before = await measurementState(env);
    const res = await register(human, campaignId, designBody(panel, change));
    expect(res.status).toBe(400);
    expect(await measurementState(env)).toEqual(before);
  });

  test('two identical registrations at once store one design, and both answers carry it', async () => {
    const human = await env.issuer.token({ org: 'org-design-10', user: 'analyst' });
    const { campaignId, panel } = await campaignBeforeExposure(human, { seed: 15, noise: 0.05 });
    const answers = await Promise.all([register(human, campaignId, designBody(panel)), register(human, campaignId, designBody(panel))]);
    expect(answers.map((r) => r.status).sort()).toEqual([200, 201]);
    const ids = await Promise.all(answers.map(async (r) => (await json<{ design: Design }>(r)).design.id));
    expect(ids[0]).toBe(ids[1]);
    expect(await env.db('geo_lift_designs').where({ campaign_id: campaignId })).toHaveLength(1);
  });

  test('a registration that starts while an import of exposure data is committing waits for it, sees it, and is refused', async () => {
    const human = await env.issuer.token({ org: 'org-design-14', user: 'analyst' });
    const { campaignId, panel } = await campaignBeforeExposure(human, { seed: 18, noise: 0.05 });
    const trx = await env.db.transaction();
    // An import in progress: it holds the campaign's outcomes lock, as importOutcomes does, and has written a day of exposure.
    await lockCampaignOutcomes(trx, campaignId, 'import');
    const batch = randomUUID();
    await trx('outcome_import_batches').insert({
      id: batch,
      advertiser_id: 'org-design-14',
      campaign_id: campaignId,
      format: 'json',
      row_count: 1,
      replaced_count: 0,
      content_sha256: '0'.repeat(64),
      imported_by: 'analyst',
    });
    await trx('campaign_outcomes').insert({
      advertiser_id: 'org-design-14',
      campaign_id: campaignId,
      date: panel.exposureStart,
      market: 'london',
      metric: 'conversions',
      value: 1,
      batch_id: batch,
    });
    const registering = register(human, campaignId, designBody(panel));
    await until('the registration to wait for the import', waitingForLock);
    await trx.commit();
    const res = await registering;
    expect(res.status).toBe(409);
    expect(await json(res)).toMatchObject({ code: 'exposure_data_present' });
  });

  test('an import that starts while a registration is being decided waits for it', async () => {
    const human = await env.issuer.token({ org: 'org-design-15', user: 'analyst' });
    const { campaignId, panel } = await campaignBeforeExposure(human, { seed: 19, noise: 0.05 });
    const trx = await env.db.transaction();
    await lockCampaignOutcomes(trx, campaignId, 'register');
    const importing = importPanel(api, human, campaignId, panel, { from: panel.exposureStart });
    await until('the import to wait for the registration', waitingForLock);
    // Still deciding: no exposure outcome has landed.
    expect(
      await trx('campaign_outcomes').where({ campaign_id: campaignId }).whereRaw('date >= ?::date', [panel.exposureStart]),
    ).toHaveLength(0);
    await trx.commit();
    await importing;
    expect(
      (await env.db('campaign_outcomes').where({ campaign_id: campaignId }).whereRaw('date >= ?::date', [panel.exposureStart])).length,
    ).toBe(196);
  });

  test("an advertiser's agent may register a design directly (it spends nothing and only binds); it is recorded as the agent's", async () => {
    const human = await env.issuer.token({ org: 'org-design-11', user: 'lead' });
    const agent = await env.issuer.token({ org: 'org-design-11', user: 'lead', agent: 'planner-bot' });
    const { campaignId, panel } = await campaignBeforeExposure(human, { seed: 16, noise: 0.05 });
    const res = await register(agent, campaignId, designBody(panel));
    expect(res.status).toBe(201);
    expect((await json<{ design: Design }>(res)).design).toMatchObject({ registeredBy: 'lead', agentClientId: 'planner-bot' });
  });

  test("another tenant's campaign is a 404 identical to an unknown id, for registering and for listing; nothing is stored", async () => {
    const owner = await env.issuer.token({ org: 'org-design-12', user: 'analyst' });
    const stranger = await env.issuer.token({ org: 'org-design-13', user: 'analyst' });
    const { campaignId, panel } = await campaignBeforeExposure(owner, { seed: 17, noise: 0.05 });
    const before = await measurementState(env);
    const pairs = [
      [await register(stranger, campaignId, designBody(panel)), await register(stranger, randomUUID(), designBody(panel))],
      [
        await api.fetch(`/api/v1/campaigns/${campaignId}/geo-lift-designs`, { token: stranger }),
        await api.fetch(`/api/v1/campaigns/${randomUUID()}/geo-lift-designs`, { token: stranger }),
      ],
    ];
    for (const [foreign, never] of pairs) {
      expect(foreign!.status).toBe(404);
      expect(withoutRequestId(await json(foreign!))).toEqual(withoutRequestId(await json(never!)));
    }
    expect(await measurementState(env)).toEqual(before);
    expect((await register('', campaignId, designBody(panel))).status).toBe(401);
  });
});
