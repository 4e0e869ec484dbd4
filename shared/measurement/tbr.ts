import jStat from 'jstat';

/**
 * Time-based regression (Kerman, Wang & Vaver 2017): on the pre-period, regress the test
 * market's daily metric on the control markets' total, y_t = a + b·x_t + e_t. After exposure
 * starts, the fitted model with the controls' actual values is the counterfactual; the
 * cumulative causal effect is Σ(y_t − ŷ_t). With a flat prior its posterior (and the
 * frequentist predictive distribution) is Student's t with n_pre − 2 degrees of freedom,
 * centred on the estimate, with variance σ²·(n_post + n_post²·cᵀ(XᵀX)⁻¹c), c = [1, x̄_post]:
 * the post-period noise plus the uncertainty of the fitted line at the post-period mean.
 */
export interface PreFit {
  intercept: number;
  slope: number;
  sigma: number;
  df: number;
  rSquared: number;
  preDays: number;
  xtxInv: number[][];
}

export const POWER = 0.8;

export function fitPrePeriod(control: number[], test: number[]): PreFit {
  const exog = control.map((x) => [1, x]);
  const model = jStat.models.ols(test, exog);
  const xtxInv = jStat.inv(jStat.multiply(jStat.transpose(exog), exog));
  return {
    intercept: model.coef[0]!,
    slope: model.coef[1]!,
    sigma: model.t.sigmaHat,
    df: model.df_resid,
    rSquared: model.R2,
    preDays: model.nobs,
    xtxInv,
  };
}

/** cᵀ(XᵀX)⁻¹c for c = [1, x]: how uncertain the fitted line is at x (in units of σ²). */
function leverage(fit: PreFit, x: number): number {
  return jStat.dot(jStat.multiply([[1, x]], fit.xtxInv)[0]!, [1, x]);
}

/** The standard deviation of the cumulative effect over postDays days whose control mean is xMean. */
function cumulativeSd(fit: PreFit, postDays: number, xMean: number, leverageScale = 1): number {
  return fit.sigma * Math.sqrt(postDays + postDays * postDays * leverage(fit, xMean) * leverageScale);
}

const criticalSum = (alpha: number, df: number) => jStat.studentt.inv(1 - alpha / 2, df) + jStat.studentt.inv(POWER, df);

export interface PowerCheck {
  /** Minimum detectable effect at 80% power and the given α, as a % of the counterfactual total. */
  mdePct: number;
  mdeAbsolute: number;
  counterfactualTotal: number;
  postDays: number;
  /** Post-period days that would bring the MDE to the expected lift with this pre-period (null: not by days alone). */
  postDaysNeeded: number | null;
  /** Pre-period days that would bring the MDE to the expected lift with this post-period (null: not by days alone). */
  preDaysNeeded: number | null;
}

const MAX_DAYS = 3650;

/** The least number of days in [from, MAX_DAYS] that is powered (the MDE falls as days are added), or null. */
function smallestPowered(from: number, powered: (days: number) => boolean): number | null {
  if (!powered(MAX_DAYS)) return null;
  let lo = from;
  let hi = MAX_DAYS;
  while (lo < hi) {
    const mid = Math.floor((lo + hi) / 2);
    if (powered(mid)) hi = mid;
    else lo = mid + 1;
  }
  return lo;
}

/**
 * Power before any causal claim. Uses only the pre-period fit and the controls' post-period
 * values, never the test market's post-period: the decision to look cannot depend on the answer.
 */
export function powerCheck(fit: PreFit, postControl: number[], alpha: number, expectedLiftPct: number): PowerCheck {
  const n = postControl.length;
  const xMean = jStat.mean(postControl);
  const dailyBaseline = fit.intercept + fit.slope * xMean;
  const counterfactualTotal = dailyBaseline * n;
  const mdeAbsolute = criticalSum(alpha, fit.df) * cumulativeSd(fit, n, xMean);
  const mdePct = counterfactualTotal > 0 ? (100 * mdeAbsolute) / counterfactualTotal : Infinity;
  const target = expectedLiftPct / 100;
  const relMde = (postDays: number, preDays: number) =>
    (criticalSum(alpha, preDays - 2) * cumulativeSd(fit, postDays, xMean, fit.preDays / preDays)) / (dailyBaseline * postDays);
  const powered = (postDays: number, preDays: number) => relMde(postDays, preDays) <= target;
  const postDaysNeeded = dailyBaseline > 0 ? smallestPowered(Math.max(n, 1), (d) => powered(d, fit.preDays)) : null;
  // More pre-period days shrink the fitted line's uncertainty, roughly as 1/n_pre.
  const preDaysNeeded = dailyBaseline > 0 && n > 0 ? smallestPowered(fit.preDays, (d) => powered(n, d)) : null;
  return { mdePct, mdeAbsolute, counterfactualTotal, postDays: n, postDaysNeeded, preDaysNeeded };
}

export interface LiftEstimate {
  effect: number;
  effectInterval: [number, number];
  liftPct: number;
  liftPctInterval: [number, number];
  pValue: number;
  /** Posterior probability that the cumulative effect is positive. */
  probabilityPositive: number;
  significant: boolean;
  counterfactual: number[];
  actualTotal: number;
  counterfactualTotal: number;
}

export function estimateLift(fit: PreFit, postControl: number[], postTest: number[], alpha: number): LiftEstimate {
  const n = postControl.length;
  const counterfactual = postControl.map((x) => fit.intercept + fit.slope * x);
  const counterfactualTotal = jStat.sum(counterfactual);
  const actualTotal = jStat.sum(postTest);
  const effect = actualTotal - counterfactualTotal;
  const sd = cumulativeSd(fit, n, jStat.mean(postControl));
  const half = jStat.studentt.inv(1 - alpha / 2, fit.df) * sd;
  const t = sd > 0 ? effect / sd : effect === 0 ? 0 : Math.sign(effect) * Infinity;
  const pValue = 2 * (1 - jStat.studentt.cdf(Math.abs(t), fit.df));
  const pct = (v: number) => (100 * v) / counterfactualTotal;
  return {
    effect,
    effectInterval: [effect - half, effect + half],
    liftPct: pct(effect),
    liftPctInterval: [pct(effect - half), pct(effect + half)],
    pValue,
    probabilityPositive: jStat.studentt.cdf(t, fit.df),
    significant: pValue < alpha,
    counterfactual,
    actualTotal,
    counterfactualTotal,
  };
}
