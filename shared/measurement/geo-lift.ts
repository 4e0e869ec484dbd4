import { estimateLift, fitPrePeriod, powerCheck, POWER } from './tbr';

export const METHOD = 'time-based-regression';
export const METHOD_REFERENCE =
  'Kerman, Wang & Vaver (2017), Estimating ad effectiveness using geo experiments in a time-based regression framework';

export interface GeoPanel {
  /** date (YYYY-MM-DD) → market id → value */
  byDate: Map<string, Map<string, number>>;
  knownMarkets: readonly string[];
}

export interface GeoDesignInput {
  testMarket: string;
  expectedLiftPct: number;
  exposureStart: string;
  alpha: number;
  minPreDays: number;
  minControlMarkets: number;
}

export interface Refusal {
  code: 'underpowered' | 'insufficient_data';
  reason: string;
  detail: string;
  figures: Record<string, unknown>;
}

export interface GeoLiftResult {
  method: typeof METHOD;
  reference: string;
  design: {
    testMarket: string;
    controlMarkets: string[];
    exposureStart: string;
    prePeriod: { from: string; to: string; days: number };
    postPeriod: { from: string; to: string; days: number };
    alpha: number;
    power: number;
    expectedLiftPct: number;
    minimumDetectableLiftPct: number;
  };
  fit: { intercept: number; slope: number; residualSd: number; rSquared: number; degreesOfFreedom: number };
  estimate: {
    liftPct: number;
    liftPctInterval: [number, number];
    incremental: number;
    incrementalInterval: [number, number];
    actualTotal: number;
    counterfactualTotal: number;
    pValue: number;
    probabilityPositive: number;
    conclusion: 'lift-detected' | 'no-lift-detected';
  };
  counterfactual: Array<{ date: string; actual: number; counterfactual: number }>;
}

const round = (v: number, places = 4) => (Number.isFinite(v) ? Number(v.toFixed(places)) : v);

/**
 * Power first, then the causal estimate. The test market is compared with the sum of the
 * control markets that have a value on every day the test market has one.
 */
export function evaluateGeoLift(panel: GeoPanel, d: GeoDesignInput): { refused: Refusal } | { result: GeoLiftResult } {
  const refuse = (code: Refusal['code'], reason: string, detail: string, figures: Record<string, unknown> = {}) => ({
    refused: { code, reason, detail, figures: { expectedLiftPct: d.expectedLiftPct, ...figures } },
  });
  if (!panel.knownMarkets.includes(d.testMarket)) {
    return refuse('insufficient_data', 'unknown_test_market', `${d.testMarket} is not a configured market.`, {
      markets: panel.knownMarkets,
    });
  }
  if (panel.byDate.size === 0) return refuse('insufficient_data', 'no_outcomes', 'No outcomes have been imported for this campaign.');
  const dates = [...panel.byDate.keys()].filter((day) => panel.byDate.get(day)!.has(d.testMarket)).sort();
  if (dates.length === 0) {
    return refuse('insufficient_data', 'no_test_market_outcomes', `No outcomes have been imported for ${d.testMarket}.`);
  }
  const candidates = panel.knownMarkets.filter((m) => m !== d.testMarket);
  const controls = candidates.filter((m) => dates.every((day) => panel.byDate.get(day)!.has(m)));
  if (controls.length < d.minControlMarkets) {
    return refuse(
      'insufficient_data',
      'too_few_control_markets',
      `${controls.length} control market(s) have outcomes on every day the test market has; at least ${d.minControlMarkets} are needed.`,
      { controlMarkets: controls, controlMarketsNeeded: d.minControlMarkets - controls.length },
    );
  }
  const pre = dates.filter((day) => day < d.exposureStart);
  const post = dates.filter((day) => day >= d.exposureStart);
  if (pre.length < d.minPreDays) {
    return refuse(
      'insufficient_data',
      'too_few_pre_period_days',
      `${pre.length} pre-period day(s) before ${d.exposureStart}; at least ${d.minPreDays} are needed.`,
      { prePeriodDays: pre.length, prePeriodDaysNeeded: d.minPreDays },
    );
  }
  if (post.length === 0) {
    return refuse('insufficient_data', 'no_post_period_outcomes', `No outcomes on or after ${d.exposureStart} yet.`, {
      prePeriodDays: pre.length,
      postPeriodDays: 0,
    });
  }
  const controlOf = (day: string) => controls.reduce((s, m) => s + panel.byDate.get(day)!.get(m)!, 0);
  const testOf = (day: string) => panel.byDate.get(day)!.get(d.testMarket)!;
  const preX = pre.map(controlOf);
  if (new Set(preX).size < 2) {
    return refuse('insufficient_data', 'flat_controls', 'The control markets do not vary over the pre-period; no fit is possible.');
  }
  const fit = fitPrePeriod(preX, pre.map(testOf));
  const postX = post.map(controlOf);
  const power = powerCheck(fit, postX, d.alpha, d.expectedLiftPct);
  const powerFigures = {
    minimumDetectableLiftPct: round(power.mdePct),
    alpha: d.alpha,
    power: POWER,
    prePeriodDays: pre.length,
    postPeriodDays: post.length,
    controlMarkets: controls,
    postPeriodDaysNeeded: power.postDaysNeeded,
    prePeriodDaysNeeded: power.preDaysNeeded,
  };
  if (!(power.counterfactualTotal > 0)) {
    return refuse(
      'insufficient_data',
      'no_baseline',
      'The counterfactual total is not positive; a relative lift is undefined.',
      powerFigures,
    );
  }
  if (!(power.mdePct <= d.expectedLiftPct)) {
    const ways = [
      power.postDaysNeeded !== null ? `${power.postDaysNeeded} post-period days` : null,
      power.preDaysNeeded !== null ? `${power.preDaysNeeded} pre-period days` : null,
    ].filter(Boolean);
    return refuse(
      'underpowered',
      'mde_above_expected_lift',
      `The minimum detectable lift is ${round(power.mdePct, 2)}% at ${POWER * 100}% power and α=${d.alpha}, above the expected ${d.expectedLiftPct}%. ` +
        (ways.length
          ? `It would be powered with ${ways.join(' or ')}, or with control markets that track ${d.testMarket} more closely.`
          : `More days alone would not power it: add control markets that track ${d.testMarket} more closely.`),
      powerFigures,
    );
  }
  const e = estimateLift(fit, postX, post.map(testOf), d.alpha);
  return {
    result: {
      method: METHOD,
      reference: METHOD_REFERENCE,
      design: {
        testMarket: d.testMarket,
        controlMarkets: controls,
        exposureStart: d.exposureStart,
        prePeriod: { from: pre[0]!, to: pre.at(-1)!, days: pre.length },
        postPeriod: { from: post[0]!, to: post.at(-1)!, days: post.length },
        alpha: d.alpha,
        power: POWER,
        expectedLiftPct: d.expectedLiftPct,
        minimumDetectableLiftPct: round(power.mdePct),
      },
      fit: {
        intercept: round(fit.intercept),
        slope: round(fit.slope, 6),
        residualSd: round(fit.sigma),
        rSquared: round(fit.rSquared),
        degreesOfFreedom: fit.df,
      },
      estimate: {
        liftPct: round(e.liftPct),
        liftPctInterval: [round(e.liftPctInterval[0]), round(e.liftPctInterval[1])],
        incremental: round(e.effect),
        incrementalInterval: [round(e.effectInterval[0]), round(e.effectInterval[1])],
        actualTotal: round(e.actualTotal),
        counterfactualTotal: round(e.counterfactualTotal),
        pValue: round(e.pValue, 6),
        probabilityPositive: round(e.probabilityPositive, 6),
        conclusion: e.significant ? 'lift-detected' : 'no-lift-detected',
      },
      counterfactual: post.map((day, i) => ({ date: day, actual: testOf(day), counterfactual: round(e.counterfactual[i]!) })),
    },
  };
}
