import jStat from 'jstat';
import { seeded } from '../support/random';

/** Normal draws by inverse transform through jStat's normal quantile. */
export function normals(rand: () => number) {
  return (mean: number, sd: number) => jStat.normal.inv(Math.min(Math.max(rand(), 1e-12), 1 - 1e-12), mean, sd);
}

export interface SyntheticPanel {
  dates: string[];
  exposureStart: string;
  /** market id → daily values */
  markets: Record<string, number[]>;
  /** The test market's post-period total had there been no campaign. */
  untreatedPostTotal: number;
  treatedPostTotal: number;
}

export interface PanelOptions {
  seed: number;
  preDays?: number;
  postDays?: number;
  controls?: number;
  /** True multiplicative lift in the test market after exposure (0.1 = +10%). */
  lift?: number;
  /** Day-to-day noise of each market, as a fraction of its level. */
  noise?: number;
  testMarket?: string;
  trend?: number;
}

const dayOf = (start: Date, i: number) => new Date(start.getTime() + i * 86_400_000).toISOString().slice(0, 10);

/**
 * Markets that share a weekly season and a slow trend, each at its own scale with its own
 * noise. After exposure starts the test market is multiplied by (1 + lift).
 */
export function syntheticPanel(o: PanelOptions): SyntheticPanel {
  const preDays = o.preDays ?? 56;
  const postDays = o.postDays ?? 28;
  const controls = o.controls ?? 6;
  const noise = o.noise ?? 0.05;
  const lift = o.lift ?? 0;
  const testMarket = o.testMarket ?? 'london';
  const rand = seeded(o.seed);
  const normal = normals(rand);
  const days = preDays + postDays;
  const start = new Date('2026-01-05T00:00:00Z');
  const dates = Array.from({ length: days }, (_, i) => dayOf(start, i));
  const common = dates.map((_, t) => 1 + 0.15 * Math.sin((2 * Math.PI * t) / 7) + (o.trend ?? 0) * t + normal(0, 0.03));
  const ids = [testMarket, 'anglia', 'central', 'granada', 'yorkshire', 'tyne-tees', 'meridian', 'west', 'wales', 'ulster'].slice(
    0,
    controls + 1,
  );
  const markets: Record<string, number[]> = {};
  let untreatedPostTotal = 0;
  let treatedPostTotal = 0;
  ids.forEach((id, k) => {
    const scale = id === testMarket ? 400 : 150 + 40 * k;
    markets[id] = common.map((c, t) => {
      const untreated = scale * c + normal(0, noise * scale);
      if (id !== testMarket || t < preDays) return untreated;
      untreatedPostTotal += untreated;
      treatedPostTotal += untreated * (1 + lift);
      return untreated * (1 + lift);
    });
  });
  return { dates, exposureStart: dates[preDays]!, markets, untreatedPostTotal, treatedPostTotal };
}

/** The panel as the geo-lift evaluation reads it from stored outcomes. */
export function asGeoPanel(p: SyntheticPanel, knownMarkets: readonly string[]) {
  const byDate = new Map<string, Map<string, number>>();
  p.dates.forEach((date, t) => byDate.set(date, new Map(Object.entries(p.markets).map(([m, values]) => [m, values[t]!]))));
  return { byDate, knownMarkets };
}
