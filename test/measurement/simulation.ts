import { addDays } from '../../shared/dates';
import { checkDesign, evaluateDesign, type GeoLiftResult, type Refusal } from '../../shared/measurement/geo-lift';
import type { Alternative } from '../../shared/measurement/tbr';
import type { TestApi } from '../support/api';
import { post } from '../support/bookings';
import { asGeoPanel, panelRows, syntheticPanel, type PanelOptions, type SyntheticPanel } from './synthetic';
import { campaignOf, rowsJson, sendOutcomes } from './support';

/**
 * A simulation study of geo-lift: seeded synthetic panels whose true effect is known, each
 * designed before exposure (six design weeks, eight fit weeks, four exposure weeks) and
 * evaluated after it, either by the pure functions or through the running service.
 */

/** The defaults a design registers when it names none (as the service's configuration has them). */
export const LIMITS = { minDesignWeeks: 6, minControlMarkets: 2, minCorrelation: 0.5 };
export const FIT_WEEKS = 8;
/** A day after every synthetic exposure has ended: every final look is final. */
export const AFTER = '2027-01-01';

export interface Scenario {
  name: string;
  panel: Omit<PanelOptions, 'seed'>;
  expectedLiftPct: number;
  alternative?: Alternative;
}

export interface Study {
  seed: number;
  panel: SyntheticPanel;
  /** The registration's answer: a refusal (stored or not), or the controls it fixed. */
  refused?: Refusal;
  controlMarkets?: string[];
  result?: GeoLiftResult;
  evaluationRefused?: Refusal;
}

export const design = (s: Scenario, panel: SyntheticPanel) => ({
  testMarket: 'london',
  exposureStart: panel.exposureStart,
  exposureEnd: panel.exposureEnd,
  fitWeeks: FIT_WEEKS,
  expectedLiftPct: s.expectedLiftPct,
  alpha: 0.05,
  power: 0.8,
  alternative: s.alternative ?? ('two-sided' as Alternative),
});

const marketsOf = (p: SyntheticPanel) => Object.keys(p.markets);

/** Registers (on the data before exposure) and evaluates (on everything up to `through`, default all) one study. */
export function runPure(s: Scenario, seed: number, through?: string): Study {
  return runLooks(s, seed, [through])[0]!;
}

/** One registration, then a look on the data up to each of `throughs` (undefined: all of it). */
export function runLooks(s: Scenario, seed: number, throughs: ReadonlyArray<string | undefined>): Study[] {
  const panel = syntheticPanel({ ...s.panel, seed });
  const d = design(s, panel);
  const checked = checkDesign(asGeoPanel(panel, marketsOf(panel), addDays(panel.exposureStart, -1)), d, LIMITS);
  if ('refused' in checked) return throughs.map(() => ({ seed, panel, refused: checked.refused }));
  if ('underpowered' in checked) return throughs.map(() => ({ seed, panel, refused: checked.underpowered }));
  const registered = { ...d, controlMarkets: checked.check.controlMarkets };
  return throughs.map((through) => {
    const outcome = evaluateDesign(asGeoPanel(panel, marketsOf(panel), through), registered, AFTER);
    return 'refused' in outcome
      ? { seed, panel, controlMarkets: registered.controlMarkets, evaluationRefused: outcome.refused }
      : { seed, panel, controlMarkets: registered.controlMarkets, result: outcome.result };
  });
}

async function ok(res: Response, what: string, ...statuses: number[]) {
  if (!statuses.includes(res.status)) throw new Error(`${what}: ${res.status} ${await res.text()}`);
  return res.json() as Promise<Record<string, unknown>>;
}

/**
 * The same study through the service: a campaign, the outcomes before exposure, the design
 * registered over HTTP, then the exposure weeks imported one `weeksPerLook` at a time, with a
 * prove-it after each. Returns every answer prove-it gave.
 */
export interface ServiceStudy {
  panel: SyntheticPanel;
  campaignId: string;
  /** The registration's 422 problem body, when it refused. */
  registration?: Record<string, unknown>;
  design?: { id: string; controlMarkets: string[] };
  looks: Array<{ status: number; body: Record<string, unknown> }>;
}

export async function runThroughService(api: TestApi, token: string, s: Scenario, seed: number, weeksPerLook = 4): Promise<ServiceStudy> {
  const panel = syntheticPanel({ ...s.panel, seed });
  const d = design(s, panel);
  const campaignId = await campaignOf(api, token);
  const before = panelRows(panel, 'conversions', undefined, addDays(panel.exposureStart, -1));
  await ok(await sendOutcomes(api, token, campaignId, rowsJson(before)), 'import before exposure', 201);
  const registered = await post(api, token, `/api/v1/campaigns/${campaignId}/geo-lift-designs`, d);
  if (registered.status === 422)
    return { panel, campaignId, registration: (await registered.json()) as Record<string, unknown>, looks: [] };
  const { design: stored } = (await ok(registered, 'register', 201)) as { design: { id: string; controlMarkets: string[] } };
  const looks: Array<{ status: number; body: Record<string, unknown> }> = [];
  const weeks = (panel.dates.length - panel.dates.indexOf(panel.exposureStart)) / 7;
  for (let w = 0; w < weeks; w += weeksPerLook) {
    const from = addDays(panel.exposureStart, 7 * w);
    const to = addDays(panel.exposureStart, 7 * Math.min(weeks, w + weeksPerLook) - 1);
    await ok(await sendOutcomes(api, token, campaignId, rowsJson(panelRows(panel, 'conversions', from, to))), 'import exposure', 201);
    const res = await post(api, token, `/api/v1/campaigns/${campaignId}/prove-it`, { designId: stored.id });
    looks.push({ status: res.status, body: (await res.json()) as Record<string, unknown> });
  }
  return { panel, campaignId, design: stored, looks };
}

/** Runs `work` over `items` with at most `width` in flight: the service's database round trips overlap. */
export async function inBatches<T, R>(items: readonly T[], width: number, work: (item: T) => Promise<R>): Promise<R[]> {
  const out: R[] = new Array(items.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: width }, async () => {
      while (next < items.length) {
        const i = next++;
        out[i] = await work(items[i]!);
      }
    }),
  );
  return out;
}

/** k of n as a rate with its Monte-Carlo standard error, √(p(1−p)/n). */
export function rate(k: number, n: number) {
  const p = n ? k / n : 0;
  const se = n ? Math.sqrt((p * (1 - p)) / n) : 0;
  return { k, n, p, se, text: `${k}/${n} = ${(100 * p).toFixed(2)}% (MC s.e. ${(100 * se).toFixed(2)}%)` };
}

/** Mean of xs with its Monte-Carlo standard error. */
export function mean(xs: readonly number[]) {
  const m = xs.reduce((a, b) => a + b, 0) / xs.length;
  const sd = Math.sqrt(xs.reduce((a, b) => a + (b - m) ** 2, 0) / (xs.length - 1));
  return { m, se: sd / Math.sqrt(xs.length), text: `${m.toFixed(3)} (MC s.e. ${(sd / Math.sqrt(xs.length)).toFixed(3)})` };
}

/** The true incremental total and lift % of a panel. */
export const truthOf = (p: SyntheticPanel) => ({
  incremental: p.treatedPostTotal - p.untreatedPostTotal,
  liftPct: 100 * (p.treatedPostTotal / p.untreatedPostTotal - 1),
});

export const covers = ([lo, hi]: readonly [number, number | null], v: number) => v >= lo && (hi === null || v <= hi);

/** How many seeds the suite runs: enough that each asserted rate's Monte-Carlo error is well inside its margin. */
export const HEAVY = process.env.GEO_LIFT_SIMULATION === 'heavy';
export const SEEDS = Array.from({ length: HEAVY ? 10_000 : 2_000 }, (_, i) => i + 1);
