import { addDays, daysFrom } from '../dates';
import {
  DAYS_PER_WEEK,
  estimateEffect,
  fewestWeeks,
  fitRatio,
  minimumDetectableLiftPct,
  type Alternative,
  type RatioFit,
  type Series,
} from './tbr';

export const METHOD = 'time-based-regression';
export const METHOD_REFERENCE =
  'Kerman, Wang & Vaver (2017), Estimating ad effectiveness using geo experiments in a time-based regression framework; weekly proportional fit with AR(1)-aware errors';

/** The most design-window weeks a check reads: older history says little about the test period. */
export const MAX_DESIGN_WEEKS = 26;
/** Daily persistence above about ρ = 0.8 (Durbin–Watson below 0.4) is refused rather than corrected. */
export const MIN_DURBIN_WATSON = 0.4;
/** The pre-period A/A test refuses a design whose placebo effect is this significant. */
export const AA_TEST_ALPHA = 0.05;

export interface GeoPanel {
  /** date (YYYY-MM-DD) → market id → value */
  byDate: Map<string, Map<string, number>>;
  knownMarkets: readonly string[];
}

/** What a design registers: everything the evaluation will use, fixed before exposure. */
export interface DesignInput {
  testMarket: string;
  /** Named controls, or every other market with outcomes on every day of the design window. */
  controlMarkets?: string[] | undefined;
  exposureStart: string;
  exposureEnd: string;
  fitWeeks: number;
  expectedLiftPct: number;
  alpha: number;
  power: number;
  alternative: Alternative;
}

export interface DesignLimits {
  minDesignWeeks: number;
  minControlMarkets: number;
  minCorrelation: number;
}

export interface Refusal {
  code: 'underpowered' | 'insufficient_data' | 'model_check_failed';
  reason: string;
  detail: string;
  figures: Record<string, unknown>;
}

interface Period {
  from: string;
  to: string;
  weeks: number;
}

/** The power gate and the model checks, computed on the design window, which no evaluation reads. */
export interface DesignCheck {
  controlMarkets: string[];
  designPeriod: Period;
  fitPeriod: Period;
  exposurePeriod: Period;
  minimumDetectableLiftPct: number;
  /** Exposure weeks that would bring the MDE to the expected lift with this fit window (null: not within 52 weeks). */
  exposureWeeksNeeded: number | null;
  /** Fit weeks that would bring the MDE to the expected lift with this exposure (null: not within 52 weeks). */
  fitWeeksNeeded: number | null;
  diagnostics: {
    correlation: number;
    durbinWatson: number;
    residualAutocorrelation: number;
    modelledAutocorrelation: number;
    relativeNoise: number;
    aaTest: { fitWeeks: number; placeboWeeks: number; placeboLiftPct: number; pValue: number };
  };
}

export type DesignOutcome = { refused: Refusal } | { underpowered: Refusal; check: DesignCheck } | { check: DesignCheck };

export const round = (v: number, places = 4) => (Number.isFinite(v) ? Number(v.toFixed(places)) : v);

const DAY_MS = 86_400_000;
const daysOf = (from: string, count: number) => {
  const start = Date.parse(`${from}T00:00:00Z`);
  return Array.from({ length: count }, (_, i) => new Date(start + i * DAY_MS).toISOString().slice(0, 10));
};
const period = (from: string, weeks: number): Period => ({ from, to: addDays(from, weeks * DAYS_PER_WEEK - 1), weeks });

const complete = (panel: GeoPanel, days: readonly string[], markets: readonly string[]) =>
  days.every((d) => {
    const row = panel.byDate.get(d);
    return !!row && markets.every((m) => row.has(m));
  });

function seriesOf(panel: GeoPanel, days: readonly string[], testMarket: string, controls: readonly string[]): Series {
  return {
    test: days.map((d) => panel.byDate.get(d)!.get(testMarket)!),
    control: days.map((d) => controls.reduce((s, m) => s + panel.byDate.get(d)!.get(m)!, 0)),
  };
}

const hasBaseline = (s: Series) => {
  for (let i = 0; i < s.control.length; i += DAYS_PER_WEEK) {
    const week = s.control.slice(i, i + DAYS_PER_WEEK).reduce((a, b) => a + b, 0);
    if (!(week > 0)) return false;
  }
  return s.test.reduce((a, b) => a + b, 0) > 0;
};

/**
 * Pre-period A/A test (as Google's matched-markets diagnostics do): the last weeks of the design
 * window play an exposure that did not happen; a placebo effect this significant means the
 * model does not hold on this data.
 */
function aaTest(s: Series, exposureWeeks: number) {
  const weeks = s.test.length / DAYS_PER_WEEK;
  const placeboWeeks = Math.min(exposureWeeks, Math.floor(weeks / 2));
  const cut = (weeks - placeboWeeks) * DAYS_PER_WEEK;
  const fit = fitRatio({ test: s.test.slice(0, cut), control: s.control.slice(0, cut) });
  const e = estimateEffect(
    fit,
    s.control.slice(0, cut),
    { test: s.test.slice(cut), control: s.control.slice(cut) },
    AA_TEST_ALPHA,
    'two-sided',
  );
  return { fitWeeks: weeks - placeboWeeks, placeboWeeks, placeboLiftPct: e.liftPct, pValue: e.pValue };
}

/**
 * Checks a design before exposure. The design window is the whole weeks (up to 26) right
 * before the fit window in which the test market and every control have outcomes on every day;
 * the evaluation later fits on the fit window and never reads the design window, so a design
 * that passes the gate because its design window happened to be quiet gains nothing from it.
 */
export function checkDesign(panel: GeoPanel, d: DesignInput, limits: DesignLimits): DesignOutcome {
  const refuse = (code: Refusal['code'], reason: string, detail: string, figures: Record<string, unknown> = {}) => ({
    refused: { code, reason, detail, figures: { expectedLiftPct: d.expectedLiftPct, ...figures } },
  });
  if (!panel.knownMarkets.includes(d.testMarket)) {
    return refuse('insufficient_data', 'unknown_test_market', `${d.testMarket} is not a configured market.`, {
      markets: panel.knownMarkets,
    });
  }
  const exposureWeeks = (daysFrom(d.exposureStart, d.exposureEnd) + 1) / DAYS_PER_WEEK;
  const fitStart = addDays(d.exposureStart, -d.fitWeeks * DAYS_PER_WEEK);
  const weekBefore = (k: number) => daysOf(addDays(fitStart, -k * DAYS_PER_WEEK), DAYS_PER_WEEK);
  const nearest = Array.from({ length: limits.minDesignWeeks }, (_, k) => weekBefore(k + 1)).flat();
  const designWanted = period(addDays(fitStart, -limits.minDesignWeeks * DAYS_PER_WEEK), limits.minDesignWeeks);
  const tooFewWeeks = (designWeeks: number, controlMarkets: string[]) =>
    refuse(
      'insufficient_data',
      'too_few_design_weeks',
      `The design is checked on whole weeks before its ${d.fitWeeks}-week fit window (from ${fitStart}): ${designWeeks} week(s) have outcomes for ${d.testMarket} and every control on every day; ${limits.minDesignWeeks} are needed, from ${designWanted.from} to ${designWanted.to}.`,
      { designWeeks, designWeeksNeeded: limits.minDesignWeeks, controlMarkets },
    );
  if (!complete(panel, nearest, [d.testMarket])) return tooFewWeeks(0, []);
  const controls =
    d.controlMarkets ??
    panel.knownMarkets.filter((m) => m !== d.testMarket && nearest.every((day) => panel.byDate.get(day)?.has(m) ?? false));
  if (controls.length < limits.minControlMarkets) {
    return refuse(
      'insufficient_data',
      'too_few_control_markets',
      `${controls.length} control market(s) have outcomes on every day from ${designWanted.from} to ${designWanted.to}; at least ${limits.minControlMarkets} are needed.`,
      { controlMarkets: controls, controlMarketsNeeded: limits.minControlMarkets - controls.length },
    );
  }
  const markets = [d.testMarket, ...controls];
  let designWeeks = 0;
  while (designWeeks < MAX_DESIGN_WEEKS && complete(panel, weekBefore(designWeeks + 1), markets)) designWeeks++;
  if (designWeeks < limits.minDesignWeeks) return tooFewWeeks(designWeeks, controls);
  const designPeriod = period(addDays(fitStart, -designWeeks * DAYS_PER_WEEK), designWeeks);
  const s = seriesOf(panel, daysOf(designPeriod.from, designWeeks * DAYS_PER_WEEK), d.testMarket, controls);
  if (!hasBaseline(s)) {
    return refuse(
      'insufficient_data',
      'no_baseline',
      'The test market or the controls have a week with no outcomes; a relative lift is undefined.',
      {
        controlMarkets: controls,
      },
    );
  }
  const fit = fitRatio(s);
  const aa = aaTest(s, exposureWeeks);
  const target = { alpha: d.alpha, power: d.power, alternative: d.alternative };
  const mde = minimumDetectableLiftPct(fit, d.fitWeeks, exposureWeeks, target);
  const powered = (fitWeeks: number, weeks: number) => minimumDetectableLiftPct(fit, fitWeeks, weeks, target) <= d.expectedLiftPct;
  const check: DesignCheck = {
    controlMarkets: controls,
    designPeriod,
    fitPeriod: period(fitStart, d.fitWeeks),
    exposurePeriod: period(d.exposureStart, exposureWeeks),
    minimumDetectableLiftPct: round(mde),
    exposureWeeksNeeded: fewestWeeks(exposureWeeks, (w) => powered(d.fitWeeks, w)),
    fitWeeksNeeded: fewestWeeks(d.fitWeeks, (w) => powered(w, exposureWeeks)),
    diagnostics: {
      correlation: round(fit.correlation),
      durbinWatson: round(fit.durbinWatson),
      residualAutocorrelation: round(fit.rhoEstimate),
      modelledAutocorrelation: round(fit.rho),
      relativeNoise: round(fit.relativeNoise, 6),
      aaTest: { ...aa, placeboLiftPct: round(aa.placeboLiftPct), pValue: round(aa.pValue, 6) },
    },
  };
  const figures = { controlMarkets: controls, designPeriod, diagnostics: check.diagnostics };
  if (!(fit.correlation >= limits.minCorrelation)) {
    return refuse(
      'model_check_failed',
      'controls_do_not_track',
      `Over ${designPeriod.from}..${designPeriod.to} the controls' daily total correlates ${round(fit.correlation, 3)} with ${d.testMarket}; at least ${limits.minCorrelation} is needed. Choose controls that move with ${d.testMarket}.`,
      figures,
    );
  }
  if (fit.durbinWatson < MIN_DURBIN_WATSON) {
    return refuse(
      'model_check_failed',
      'residuals_autocorrelated',
      `The daily residuals persist from day to day beyond what the model corrects for (Durbin–Watson ${round(fit.durbinWatson, 3)}, below ${MIN_DURBIN_WATSON}): the controls miss a slow movement of ${d.testMarket}.`,
      figures,
    );
  }
  if (aa.pValue < AA_TEST_ALPHA) {
    return refuse(
      'model_check_failed',
      'aa_test_failed',
      `An A/A test on the design window found a ${round(aa.placeboLiftPct, 2)}% effect where there was none (p = ${round(aa.pValue, 4)}): the controls do not predict ${d.testMarket} reliably.`,
      figures,
    );
  }
  if (!(mde <= d.expectedLiftPct)) {
    const ways = [
      check.exposureWeeksNeeded !== null ? `${check.exposureWeeksNeeded} exposure weeks` : null,
      check.fitWeeksNeeded !== null ? `${check.fitWeeksNeeded} fit weeks` : null,
    ].filter(Boolean);
    return {
      check,
      underpowered: {
        code: 'underpowered',
        reason: 'mde_above_expected_lift',
        detail:
          `The minimum detectable lift is ${round(mde, 2)}% at ${d.power * 100}% power and α=${d.alpha} (${d.alternative}), above the expected ${d.expectedLiftPct}%. ` +
          (ways.length
            ? `A test with ${ways.join(' or ')}, or with control markets that track ${d.testMarket} more closely, would be powered.`
            : `More weeks alone would not power it: choose control markets that track ${d.testMarket} more closely.`),
        figures: {
          expectedLiftPct: d.expectedLiftPct,
          minimumDetectableLiftPct: check.minimumDetectableLiftPct,
          alpha: d.alpha,
          power: d.power,
          alternative: d.alternative,
          exposureWeeksNeeded: check.exposureWeeksNeeded,
          fitWeeksNeeded: check.fitWeeksNeeded,
          controlMarkets: controls,
        },
      },
    };
  }
  return { check };
}

/** A registered design, as the evaluation reads it. */
export interface RegisteredDesign {
  testMarket: string;
  controlMarkets: string[];
  exposureStart: string;
  exposureEnd: string;
  fitWeeks: number;
  alpha: number;
  alternative: Alternative;
}

export type Conclusion = 'lift-detected' | 'decline-detected' | 'no-detectable-effect';

export interface GeoLiftResult {
  method: typeof METHOD;
  reference: string;
  /** `interim` before the registered end (or before all its weeks are in): no claim is made. */
  look: 'interim' | 'final';
  periods: { fit: Period; exposure: Period; exposureWeeksRegistered: number };
  fit: {
    ratio: number;
    relativeNoise: number;
    residualAutocorrelation: number;
    modelledAutocorrelation: number;
    durbinWatson: number;
    correlation: number;
    weeks: number;
    degreesOfFreedom: number;
  };
  estimate: {
    liftPct: number;
    liftPctInterval: [number, number | null];
    incremental: number;
    incrementalInterval: [number, number];
    standardError: number;
    intervalLevel: number;
    actualTotal: number;
    counterfactualTotal: number;
    alternative: Alternative;
    /** Null at an interim look: only the final look tests. */
    pValue: number | null;
    probabilityPositive: number;
    conclusion: Conclusion | null;
  };
  counterfactual: Array<{ date: string; actual: number; counterfactual: number }>;
}

function conclude(pValue: number, effect: number, alpha: number, alternative: Alternative): Conclusion {
  if (!(pValue < alpha)) return 'no-detectable-effect';
  if (effect > 0) return 'lift-detected';
  return alternative === 'two-sided' && effect < 0 ? 'decline-detected' : 'no-detectable-effect';
}

/**
 * Evaluates a registered design on the outcomes in hand: the fit window and the complete
 * exposure weeks so far. Before the registered end has passed, or while weeks are missing, the
 * look is interim and makes no claim; the final look tests once, at the registered α.
 */
export function evaluateDesign(panel: GeoPanel, d: RegisteredDesign, today: string): { refused: Refusal } | { result: GeoLiftResult } {
  const refuse = (code: Refusal['code'], reason: string, detail: string, figures: Record<string, unknown> = {}) => ({
    refused: { code, reason, detail, figures },
  });
  const markets = [d.testMarket, ...d.controlMarkets];
  const fitStart = addDays(d.exposureStart, -d.fitWeeks * DAYS_PER_WEEK);
  const fitDays = daysOf(fitStart, d.fitWeeks * DAYS_PER_WEEK);
  const missing = Object.fromEntries(
    markets.map((m) => [m, fitDays.filter((day) => !panel.byDate.get(day)?.has(m)).length] as const).filter(([, n]) => n > 0),
  );
  if (Object.keys(missing).length) {
    return refuse(
      'insufficient_data',
      'missing_fit_outcomes',
      `The fit window ${fitStart}..${fitDays.at(-1)} lacks outcomes (days missing per market are listed); import them to evaluate.`,
      { fitPeriod: period(fitStart, d.fitWeeks), missingDays: missing },
    );
  }
  const registeredWeeks = (daysFrom(d.exposureStart, d.exposureEnd) + 1) / DAYS_PER_WEEK;
  let weeks = 0;
  while (weeks < registeredWeeks && complete(panel, daysOf(addDays(d.exposureStart, weeks * DAYS_PER_WEEK), DAYS_PER_WEEK), markets))
    weeks++;
  if (weeks === 0) {
    return refuse(
      'insufficient_data',
      'no_post_period_outcomes',
      `No exposure week is complete yet: the first is ${d.exposureStart}..${addDays(d.exposureStart, DAYS_PER_WEEK - 1)}, for ${d.testMarket} and every control.`,
      { exposureWeeks: 0, exposureWeeksRegistered: registeredWeeks },
    );
  }
  const fitSeries = seriesOf(panel, fitDays, d.testMarket, d.controlMarkets);
  const postDays = daysOf(d.exposureStart, weeks * DAYS_PER_WEEK);
  const post = seriesOf(panel, postDays, d.testMarket, d.controlMarkets);
  if (!hasBaseline(fitSeries)) {
    return refuse('insufficient_data', 'no_baseline', 'The test market or the controls have a week with no outcomes in the fit window.');
  }
  const fit: RatioFit = fitRatio(fitSeries);
  const e = estimateEffect(fit, fitSeries.control, post, d.alpha, d.alternative);
  const final = weeks === registeredWeeks && today > d.exposureEnd;
  return {
    result: {
      method: METHOD,
      reference: METHOD_REFERENCE,
      look: final ? 'final' : 'interim',
      periods: { fit: period(fitStart, d.fitWeeks), exposure: period(d.exposureStart, weeks), exposureWeeksRegistered: registeredWeeks },
      fit: {
        ratio: round(fit.ratio, 8),
        relativeNoise: round(fit.relativeNoise, 6),
        residualAutocorrelation: round(fit.rhoEstimate),
        modelledAutocorrelation: round(fit.rho),
        durbinWatson: round(fit.durbinWatson),
        correlation: round(fit.correlation),
        weeks: fit.weeks,
        degreesOfFreedom: round(fit.degreesOfFreedom),
      },
      estimate: {
        liftPct: round(e.liftPct),
        liftPctInterval: [round(e.liftPctInterval[0]), e.liftPctInterval[1] === null ? null : round(e.liftPctInterval[1])],
        incremental: round(e.effect),
        incrementalInterval: [round(e.effectInterval[0]), round(e.effectInterval[1])],
        standardError: round(e.standardError),
        intervalLevel: round(e.intervalLevel, 6),
        actualTotal: round(e.actualTotal),
        counterfactualTotal: round(e.counterfactualTotal),
        alternative: d.alternative,
        pValue: final ? round(e.pValue, 6) : null,
        probabilityPositive: round(e.probabilityPositive, 6),
        conclusion: final ? conclude(e.pValue, e.effect, d.alpha, d.alternative) : null,
      },
      counterfactual: postDays.map((day, i) => ({ date: day, actual: post.test[i]!, counterfactual: round(e.counterfactual[i]!) })),
    },
  };
}
