import { seeded } from '../support/random';

/** Normal draws from the seeded uniforms by the Box–Muller transform (two per pair of uniforms). */
export function normals(rand: () => number) {
  let spare: number | null = null;
  return (mean: number, sd: number) => {
    if (spare !== null) {
      const z = spare;
      spare = null;
      return mean + sd * z;
    }
    const radius = Math.sqrt(-2 * Math.log(Math.max(rand(), 1e-300)));
    const angle = 2 * Math.PI * rand();
    spare = radius * Math.sin(angle);
    return mean + sd * radius * Math.cos(angle);
  };
}

export interface SyntheticPanel {
  dates: string[];
  exposureStart: string;
  /** The last day of the post-period. */
  exposureEnd: string;
  /** market id → daily values */
  markets: Record<string, number[]>;
  /** The test market's daily values had there been no campaign (equal to `markets[testMarket]` before exposure). */
  untreated: number[];
  /** The test market's post-period total had there been no campaign. */
  untreatedPostTotal: number;
  treatedPostTotal: number;
}

export interface PanelOptions {
  seed: number;
  /** Days before exposure (default 98: six weeks to design on and eight to fit on). */
  preDays?: number;
  postDays?: number;
  controls?: number;
  /** True multiplicative lift in the test market after exposure (0.1 = +10%, −0.1 a decline). */
  lift?: number;
  /** Each market's own relative noise: its stationary standard deviation, as a fraction of the level. */
  noise?: number;
  /** AR(1) persistence of each market's own noise from one day to the next (0: independent days). */
  rho?: number;
  /** Compound daily growth shared by every market (0.003 = +0.3% a day). */
  growth?: number;
  /** Linear daily trend shared by every market, as a fraction of the first day's level. */
  trend?: number;
  /** Amplitude of the weekly season shared by every market. */
  season?: number;
  testMarket?: string;
  /** The first day (default 2026-01-05). */
  start?: string;
}

const dayOf = (start: Date, i: number) => new Date(start.getTime() + i * 86_400_000).toISOString().slice(0, 10);
const CONTROL_IDS = ['anglia', 'central', 'granada', 'yorkshire', 'tyne-tees', 'meridian', 'west', 'wales', 'ulster'];

/**
 * Geo markets shaped like real sales: a level of their own (the market effect), a shared weekly
 * season, a shared trend or compound growth, shared daily shocks, and noise of their own that
 * may persist from day to day (AR(1)). After exposure starts the test market is multiplied by
 * (1 + lift); the untreated series is kept, so the truth of every estimate is known.
 */
export function syntheticPanel(o: PanelOptions): SyntheticPanel {
  const preDays = o.preDays ?? 98;
  const postDays = o.postDays ?? 28;
  const controls = o.controls ?? 6;
  const noise = o.noise ?? 0.05;
  const rho = o.rho ?? 0;
  const lift = o.lift ?? 0;
  const season = o.season ?? 0.15;
  const testMarket = o.testMarket ?? 'london';
  const rand = seeded(o.seed);
  const normal = normals(rand);
  const days = preDays + postDays;
  const start = new Date(`${o.start ?? '2026-01-05'}T00:00:00Z`);
  const dates = Array.from({ length: days }, (_, i) => dayOf(start, i));
  const common = dates.map(
    (_, t) => (1 + season * Math.sin((2 * Math.PI * t) / 7) + (o.trend ?? 0) * t + normal(0, 0.03)) * Math.pow(1 + (o.growth ?? 0), t),
  );
  const ids = [testMarket, ...CONTROL_IDS.filter((m) => m !== testMarket)].slice(0, controls + 1);
  const markets: Record<string, number[]> = {};
  let untreated: number[] = [];
  ids.forEach((id, k) => {
    const scale = id === testMarket ? 400 : 150 + 40 * k;
    // A stationary AR(1): the first day drawn from the stationary law, innovations scaled to keep its sd.
    let e = normal(0, noise);
    const innovation = noise * Math.sqrt(1 - rho * rho);
    const values = common.map((c, t) => {
      if (t > 0) e = rho * e + normal(0, innovation);
      return Math.max(0, scale * c * (1 + e));
    });
    if (id === testMarket) untreated = values;
    markets[id] = values.map((v, t) => (id === testMarket && t >= preDays ? v * (1 + lift) : v));
  });
  const sumPost = (xs: number[]) => xs.slice(preDays).reduce((s, v) => s + v, 0);
  return {
    dates,
    exposureStart: dates[preDays]!,
    exposureEnd: dates[days - 1]!,
    markets,
    untreated,
    untreatedPostTotal: sumPost(untreated),
    treatedPostTotal: sumPost(markets[testMarket]!),
  };
}

/** The panel as the geo-lift evaluation reads it from stored outcomes, up to and including `through` if given. */
export function asGeoPanel(p: SyntheticPanel, knownMarkets: readonly string[], through?: string) {
  const byDate = new Map<string, Map<string, number>>();
  p.dates.forEach((date, t) => {
    if (through && date > through) return;
    byDate.set(date, new Map(Object.entries(p.markets).map(([m, values]) => [m, values[t]!])));
  });
  return { byDate, knownMarkets };
}

/** Outcome rows of the panel's days in [from, to] (inclusive, either open), as the import takes them. */
export function panelRows(p: SyntheticPanel, metric = 'conversions', from?: string, to?: string) {
  return Object.entries(p.markets).flatMap(([market, values]) =>
    values.flatMap((value, t) => {
      const date = p.dates[t]!;
      if ((from && date < from) || (to && date > to)) return [];
      return [{ date, market, metric, value }];
    }),
  );
}
