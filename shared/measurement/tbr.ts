import jStat from 'jstat';

/**
 * Time-based regression (Kerman, Wang & Vaver 2017) made to survive sales-shaped data:
 * - weekly sums (whole weeks aligned on the exposure start), so a weekly season the markets
 *   share, or one they do not, cancels out and day-to-day persistence mostly averages away;
 * - a proportional fit, Y_w = β·X_w·(1 + η_w): β̂ = ΣY/ΣX over the fit weeks (the ratio
 *   estimator). Unlike least squares with an intercept, noise in the controls does not pull β̂
 *   towards zero, so a trend does not bias the counterfactual;
 * - multiplicative noise: each week's error has standard deviation τ·β·X_w, so a growing
 *   business does not make the post-period look quieter than it is;
 * - the persistence the weekly sums keep is modelled: days follow an AR(1) with lag-one
 *   correlation ρ, estimated from the fit window's daily residuals (weekday means removed,
 *   small-sample bias corrected) and used one standard error above its estimate, because an
 *   underestimate narrows the interval; ρ sets the correlation of weekly sums k weeks apart.
 * The cumulative effect Δ̂ = ΣY_post − β̂·ΣX_post then has variance τ²·gᵀRg with
 * g = (−r·β·X_pre, β·X_post), r = ΣX_post/ΣX_pre, and Δ̂/sd is referred to Student's t with
 * the effective degrees of freedom of a variance estimated from correlated weeks (Bartlett).
 */

export const DAYS_PER_WEEK = 7;
/** Persistence above this is not modelled: its estimate is too uncertain to correct with. */
export const MAX_MODELLED_RHO = 0.9;

export type Alternative = 'two-sided' | 'greater';

/** Daily values of the test market and of the controls' total, over whole weeks. */
export interface Series {
  test: number[];
  control: number[];
}

export interface RatioFit {
  /** β̂: the test market's level as a share of the controls' total. */
  ratio: number;
  weeks: number;
  /** τ̂: the standard deviation of a week's relative error. */
  relativeNoise: number;
  /** ρ̂: the daily residuals' lag-one autocorrelation, bias-corrected. */
  rhoEstimate: number;
  /** The ρ the errors are modelled with: ρ̂ plus one standard error, within [0, MAX_MODELLED_RHO]. */
  rho: number;
  /** The Durbin–Watson statistic of the daily residuals (weekday means removed): about 2(1 − ρ). */
  durbinWatson: number;
  /** Pearson correlation of the daily test and control values. */
  correlation: number;
  /** Effective degrees of freedom of τ̂ (fit weeks − 1 when weeks are uncorrelated). */
  degreesOfFreedom: number;
}

/** Sum of each run of seven days. */
export function weekly(daily: readonly number[]): number[] {
  const out: number[] = [];
  for (let i = 0; i + DAYS_PER_WEEK <= daily.length; i += DAYS_PER_WEEK) out.push(jStat.sum(daily.slice(i, i + DAYS_PER_WEEK)));
  return out;
}

/** Correlation of two weekly sums k weeks apart when days follow an AR(1) with lag-one correlation ρ. */
export function weeklyCorrelation(rho: number, k: number): number {
  if (k === 0) return 1;
  if (rho <= 0) return 0;
  let within = DAYS_PER_WEEK;
  for (let d = 1; d < DAYS_PER_WEEK; d++) within += 2 * (DAYS_PER_WEEK - d) * rho ** d;
  const s = (1 - rho ** DAYS_PER_WEEK) / (1 - rho);
  return (rho ** (DAYS_PER_WEEK * k - (DAYS_PER_WEEK - 1)) * s * s) / within;
}

/**
 * gᵀRg for the correlation matrix R of consecutive weekly sums. Beyond lag one the weekly
 * correlation falls by ρ⁷ a week (ρ_w(k) = ρ^(7(k−1))·ρ_w(1)), so the cross terms are one
 * running sum: Σ_{i<j} g_i·g_j·ρ_w(j−i) = ρ_w(1)·Σ_j g_j·h_j with h_{j+1} = ρ⁷·h_j + g_j.
 */
function quadraticForm(g: readonly number[], rho: number): number {
  const lagOne = weeklyCorrelation(rho, 1);
  const decay = rho > 0 ? rho ** DAYS_PER_WEEK : 0;
  let squares = 0;
  let cross = 0;
  let h = 0;
  for (const gj of g) {
    squares += gj * gj;
    cross += gj * h;
    h = decay * h + gj;
  }
  return squares + 2 * lagOne * cross;
}

/**
 * Daily residuals relative to their week's level, with each weekday's mean removed (markets may
 * differ in weekly shape; weekly sums do not care, but the day-to-day persistence estimate would).
 */
function dailyResiduals(s: Series, ratio: number): number[] {
  const rel = s.test.map((y, t) => {
    const week = Math.floor(t / DAYS_PER_WEEK) * DAYS_PER_WEEK;
    const level = (ratio * jStat.sum(s.control.slice(week, week + DAYS_PER_WEEK))) / DAYS_PER_WEEK;
    return level > 0 ? (y - ratio * s.control[t]!) / level : 0;
  });
  const weekdayMean = Array.from({ length: DAYS_PER_WEEK }, (_, d) => jStat.mean(rel.filter((_, t) => t % DAYS_PER_WEEK === d)));
  return rel.map((v, t) => v - weekdayMean[t % DAYS_PER_WEEK]!);
}

function persistence(e: readonly number[]): { rhoEstimate: number; rho: number; durbinWatson: number } {
  let ss = 0;
  let lagged = 0;
  let diff = 0;
  e.forEach((v, t) => {
    ss += v * v;
    if (t > 0) {
      lagged += v * e[t - 1]!;
      diff += (v - e[t - 1]!) ** 2;
    }
  });
  if (!(ss > 0)) return { rhoEstimate: 0, rho: 0, durbinWatson: 2 };
  const n = e.length;
  const raw = lagged / ss;
  // The lag-one sample autocorrelation is biased towards zero by about (1 + 3ρ)/n (Kendall 1954;
  // Marriott & Pope 1954); its standard error is about √((1 − ρ²)/n).
  const rhoEstimate = raw + (1 + 3 * raw) / n;
  const upper = rhoEstimate + Math.sqrt(Math.max(0, 1 - rhoEstimate * rhoEstimate) / n);
  return { rhoEstimate, rho: Math.min(Math.max(upper, 0), MAX_MODELLED_RHO), durbinWatson: diff / ss };
}

/**
 * Degrees of freedom of a variance estimated from `weeks` weekly residuals whose lag-k
 * correlation is ρ_w(k): (weeks − 1)/(1 + 2·Σ(1 − k/weeks)·ρ_w(k)²) (Bartlett 1946).
 */
export function effectiveDegreesOfFreedom(weeks: number, rho: number): number {
  let inflation = 1;
  for (let k = 1; k < weeks; k++) inflation += 2 * (1 - k / weeks) * weeklyCorrelation(rho, k) ** 2;
  return (weeks - 1) / inflation;
}

/** Fits the proportional model on whole weeks of daily values. */
export function fitRatio(s: Series): RatioFit {
  const y = weekly(s.test);
  const x = weekly(s.control);
  const sx = jStat.sum(x);
  const ratio = jStat.sum(y) / sx;
  const { rhoEstimate, rho, durbinWatson } = persistence(dailyResiduals(s, ratio));
  // E[Σq²] = τ²·tr(A R Aᵀ) with A = I − 1vᵀ, v = X/ΣX: the fit uses up about one week of the noise.
  const v = x.map((xi) => xi / sx);
  const lag = v.map((_, k) => weeklyCorrelation(rho, k));
  const rv = v.map((_, i) => jStat.sum(v.map((vj, j) => vj * lag[Math.abs(i - j)]!)));
  const vRv = jStat.sum(v.map((vi, i) => vi * rv[i]!));
  const vR1 = jStat.sum(rv);
  const trace = y.length - 2 * vR1 + y.length * vRv;
  const q = y.map((yi, i) => (yi - ratio * x[i]!) / (ratio * x[i]!));
  const relativeNoise = Math.sqrt(jStat.sum(q.map((qi) => qi * qi)) / trace);
  return {
    ratio,
    weeks: y.length,
    relativeNoise,
    rhoEstimate,
    rho,
    durbinWatson,
    correlation: jStat.corrcoeff(s.test, s.control),
    degreesOfFreedom: effectiveDegreesOfFreedom(y.length, rho),
  };
}

/** The standard deviation of Δ̂ over the post weeks whose control sums are postX, fitted on weeks whose sums are preX. */
function effectSd(fit: RatioFit, preX: readonly number[], postX: readonly number[]): number {
  const r = jStat.sum([...postX]) / jStat.sum([...preX]);
  const g = [...preX.map((x) => -r * fit.ratio * x), ...postX.map((x) => fit.ratio * x)];
  return fit.relativeNoise * Math.sqrt(quadraticForm(g, fit.rho));
}

const criticalValue = (alpha: number, alternative: Alternative, df: number) =>
  jStat.studentt.inv(1 - (alternative === 'two-sided' ? alpha / 2 : alpha), df);

export interface EffectEstimate {
  effect: number;
  standardError: number;
  /** h: the incremental interval is effect ± h. */
  halfWidth: number;
  effectInterval: [number, number];
  liftPct: number;
  /** The exact image of the incremental interval; the upper end is null (unbounded) when h ≥ Σŷ. */
  liftPctInterval: [number, number | null];
  /** Two-sided for a two-sided design; for a one-sided one, 1 − 2α, so its lower end is the one-sided bound. */
  intervalLevel: number;
  actualTotal: number;
  counterfactualTotal: number;
  /** Daily counterfactual β̂·x_t over the post days. */
  counterfactual: number[];
  pValue: number;
  /** P(Δ > 0) under the t distribution of the estimate (the posterior under a flat prior). */
  probabilityPositive: number;
  degreesOfFreedom: number;
}

/** The cumulative effect over the post weeks, with its interval and p-value as the design's alternative says. */
export function estimateEffect(
  fit: RatioFit,
  fitControl: readonly number[],
  post: Series,
  alpha: number,
  alternative: Alternative,
): EffectEstimate {
  const counterfactual = post.control.map((x) => fit.ratio * x);
  const counterfactualTotal = jStat.sum(counterfactual);
  const actualTotal = jStat.sum(post.test);
  const effect = actualTotal - counterfactualTotal;
  const sd = effectSd(fit, weekly(fitControl), weekly(post.control));
  const df = fit.degreesOfFreedom;
  const h = criticalValue(alpha, alternative, df) * sd;
  const t = sd > 0 ? effect / sd : effect === 0 ? 0 : Math.sign(effect) * Infinity;
  const upperTail = 1 - jStat.studentt.cdf(t, df);
  const pValue = alternative === 'two-sided' ? 2 * Math.min(upperTail, 1 - upperTail) : upperTail;
  return {
    effect,
    standardError: sd,
    halfWidth: h,
    effectInterval: [effect - h, effect + h],
    liftPct: (100 * effect) / counterfactualTotal,
    liftPctInterval: [
      100 * (actualTotal / (counterfactualTotal + h) - 1),
      counterfactualTotal > h ? 100 * (actualTotal / (counterfactualTotal - h) - 1) : null,
    ],
    intervalLevel: alternative === 'two-sided' ? 1 - alpha : 1 - 2 * alpha,
    actualTotal,
    counterfactualTotal,
    counterfactual,
    pValue,
    probabilityPositive: 1 - upperTail,
    degreesOfFreedom: df,
  };
}

/** The confidence with which the noise a power calculation plans for is not exceeded. */
export const PLANNING_CONFIDENCE = 0.8;

/**
 * The noise to plan for: τ̂ at its one-sided 80% upper confidence limit, τ̂·√(ν/χ²_{0.2,ν})
 * (Browne 1995). Planning with τ̂ itself delivers less power than stated, since τ̂ from a few
 * weeks is as likely to be low as high and power falls faster than it rises.
 */
export function plannedNoise(fit: RatioFit): number {
  const df = fit.degreesOfFreedom;
  return fit.relativeNoise * Math.sqrt(df / jStat.chisquare.inv(1 - PLANNING_CONFIDENCE, df));
}

export interface PowerTarget {
  alpha: number;
  power: number;
  alternative: Alternative;
  expectedLiftPct: number;
}

/**
 * The minimum detectable lift (% of the counterfactual) of an evaluation on `fitWeeks` weeks and
 * `postWeeks` exposure weeks, with the noise and persistence of `fit` and a steady level.
 */
export function minimumDetectableLiftPct(fit: RatioFit, fitWeeks: number, postWeeks: number, t: Omit<PowerTarget, 'expectedLiftPct'>) {
  const g = [...Array<number>(fitWeeks).fill(-postWeeks / fitWeeks), ...Array<number>(postWeeks).fill(1)];
  const sd = (plannedNoise(fit) * Math.sqrt(quadraticForm(g, fit.rho))) / postWeeks;
  const df = effectiveDegreesOfFreedom(fitWeeks, fit.rho);
  return 100 * (criticalValue(t.alpha, t.alternative, df) + jStat.studentt.inv(t.power, df)) * sd;
}

export const MAX_WEEKS = 52;

/** The fewest weeks in [from, MAX_WEEKS] at which `powered` holds (the MDE falls as weeks are added), or null. */
export function fewestWeeks(from: number, powered: (weeks: number) => boolean): number | null {
  for (let w = Math.max(from, 1); w <= MAX_WEEKS; w++) if (powered(w)) return w;
  return null;
}
