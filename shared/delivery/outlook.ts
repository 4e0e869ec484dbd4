import { z } from 'zod';
import { addDays, daysFrom } from '../dates';

/** The share of flights whose final spend the interval is built to cover (docs/delivery.md, Outlook). */
export const OUTLOOK_LEVEL = 0.8;
/** Reported days the model reads, the most recent first: the recent daily rate. */
export const OUTLOOK_WINDOW_DAYS = 28;
/** Fewer reported days than this and the outlook is the plan (no rate, no interval). */
export const OUTLOOK_MIN_DAYS = 3;
/** From this many days in the window, the weekday pattern is estimated (every weekday seen twice). */
export const OUTLOOK_WEEKDAY_DAYS = 14;

export const OUTLOOK_CLASSES = ['on-track', 'under-delivery', 'early-exhaustion'] as const;
export type OutlookClass = (typeof OUTLOOK_CLASSES)[number];

const Range = {
  projectedMinor: z.number().int(),
  /** The interval's ends at `level`; null while the outlook is the plan (too few days to measure a rate). */
  lowMinor: z.number().int().nullable(),
  highMinor: z.number().int().nullable(),
};

export const OutlookSchema = z.object({
  /**
   * How the projection was made: `plan` (fewer than 3 days reported: the rest of the budget at an even pace),
   * `recent-rate` (the mean of the last reported days, their spread), `weekday-rate` (the same with each
   * weekday's own share, from 14 days; no day above the line's daily cap), `idle` (paused or ended: no further spend), `final` (the flight is over).
   */
  basis: z.enum(['plan', 'recent-rate', 'weekday-rate', 'idle', 'final']),
  /** The share of outcomes the interval is built to cover. */
  level: z.number(),
  /** Reported days the rate was measured on, and the flight days still to come after the last of them. */
  daysObserved: z.number().int(),
  daysRemaining: z.number().int(),
  /** The measured daily rate (weekday-adjusted for `weekday-rate`) and its day-to-day spread; null for `plan`, `idle` and `final`. */
  dailyRateMinor: z.number().int().nullable(),
  dailySpreadMinor: z.number().int().nullable(),
  /** Delivered spend at the flight's end. */
  spend: z.object(Range),
  /** Delivered impressions at the flight's end, at the cost per impression delivered so far. */
  impressions: z.object({ projected: z.number().int(), low: z.number().int().nullable(), high: z.number().int().nullable() }),
  classification: z.enum(OUTLOOK_CLASSES),
  /** The day the projected spend reaches the budget, when that is before the flight's last day (`early-exhaustion`). */
  exhaustionDate: z.string().nullable(),
});
export type Outlook = z.infer<typeof OutlookSchema>;

export interface OutlookDay {
  date: string;
  spendMinor: number;
  impressions: number;
}

export interface OutlookInput {
  budgetMinor: number;
  startDate: string;
  endDate: string;
  /** The last day that is over, on the line's clock. */
  through: string;
  /** The days reported so far (any order; days outside the flight are ignored). */
  days: readonly OutlookDay[];
  /** Paused or ended: it will not spend more unless resumed. */
  idle: boolean;
  /** The line's daily cap: no projected day spends more. */
  dailyCapMinor?: number | null;
}

// Student's t at 0.90 (a two-sided 80% interval), by degrees of freedom; beyond the table, the normal's 1.2816.
const T90: Array<[number, number]> = [
  [1, 3.078],
  [2, 1.886],
  [3, 1.638],
  [4, 1.533],
  [5, 1.476],
  [6, 1.44],
  [7, 1.415],
  [8, 1.397],
  [9, 1.383],
  [10, 1.372],
  [12, 1.356],
  [15, 1.341],
  [20, 1.325],
  [25, 1.316],
  [30, 1.31],
  [40, 1.303],
  [60, 1.296],
  [120, 1.289],
];
function t90(df: number): number {
  let q = 1.2816;
  for (let i = T90.length - 1; i >= 0; i--) if (df <= T90[i]![0]) q = T90[i]![1];
  return q;
}

/** Monday 0 … Sunday 6. */
// 1970-01-01 was a Thursday (3, counting Monday as 0).
const weekday = (d: string) => (Math.floor(Date.parse(`${d}T00:00:00Z`) / 86_400_000) + 3) % 7;
const mean = (xs: readonly number[]) => xs.reduce((s, x) => s + x, 0) / xs.length;

interface Rate {
  basis: 'recent-rate' | 'weekday-rate';
  /** The mean daily spend, per weekday (the same for every weekday without the pattern). */
  byWeekday: number[];
  /** How many window days each weekday's mean was measured on. */
  seen: number[];
  /** The day-to-day spread, relative to the day's mean. */
  relSpread: number;
  df: number;
  rate: number;
}

/**
 * The daily rate of the window's days. From 14 days each weekday has its own mean (seen at least
 * twice); before, one mean for all days. The spread is the days' deviation from their mean, relative
 * to it, with the degrees of freedom that are left after the means.
 */
function measure(window: readonly OutlookDay[]): Rate {
  const m = window.length;
  const all = mean(window.map((d) => d.spendMinor));
  const pattern = m >= OUTLOOK_WEEKDAY_DAYS && all > 0;
  const seen = [0, 0, 0, 0, 0, 0, 0];
  const byWeekday = [all, all, all, all, all, all, all];
  if (pattern) {
    const sums = [0, 0, 0, 0, 0, 0, 0];
    for (const d of window) {
      const w = weekday(d.date);
      seen[w]!++;
      sums[w]! += d.spendMinor;
    }
    for (let w = 0; w < 7; w++) byWeekday[w] = seen[w] ? sums[w]! / seen[w]! : all;
  } else seen.fill(m);
  const df = Math.max(1, m - (pattern ? 7 : 1));
  const relSpread =
    all > 0
      ? Math.sqrt(
          window.reduce((s, d) => {
            const mu = byWeekday[weekday(d.date)]!;
            return s + (mu > 0 ? (d.spendMinor - mu) / mu : 0) ** 2;
          }, 0) / df,
        )
      : 0;
  return { basis: pattern ? 'weekday-rate' : 'recent-rate', byWeekday, seen, relSpread, df, rate: all };
}

/**
 * Where a line ends its flight: delivered spend and impressions at the flight's end, with an
 * interval at `OUTLOOK_LEVEL`, and a classification. The model (docs/delivery.md, Outlook): the
 * mean daily spend of the last 28 reported days (from 14 days, each weekday's share of it), each
 * day to come drawing that rate with the measured day-to-day spread, plus the uncertainty of the
 * rate itself; the interval is Student's t on that variance. A paused or ended line spends no
 * more. `early-exhaustion` when the projected cumulative spend reaches the budget before the
 * flight's last day (with that day), `under-delivery` when the projection falls short of the budget
 * by more than `tolerance`, else `on-track`.
 */
export function outlookOf(i: OutlookInput, tolerance: number): Outlook {
  const flightDays = daysFrom(i.startDate, i.endDate) + 1;
  const reported = i.days
    .filter((d) => d.date >= i.startDate && d.date <= i.endDate && d.date <= i.through)
    .slice()
    .sort((a, b) => (a.date < b.date ? -1 : 1));
  const delivered = reported.reduce((s, d) => s + d.spendMinor, 0);
  const deliveredImpressions = reported.reduce((s, d) => s + d.impressions, 0);
  // Days still to come: after the last day reported, or after the last day over when none is reported late.
  const lastKnown = reported.at(-1)?.date ?? addDays(i.startDate, -1);
  const daysRemaining = Math.max(0, Math.min(flightDays, daysFrom(lastKnown, i.endDate)));
  const window = reported.slice(-OUTLOOK_WINDOW_DAYS);
  // The days to come by their weekday only: a date is made only for the day the budget runs out.
  const firstWeekday = weekday(lastKnown) + 1;
  const upcoming = Array.from({ length: daysRemaining }, (_, k) => (firstWeekday + k) % 7);
  const perImpression = delivered > 0 ? deliveredImpressions / delivered : 0;
  const base = { level: OUTLOOK_LEVEL, daysObserved: window.length, daysRemaining };

  const settled = (basis: 'idle' | 'final') => ({
    ...base,
    basis,
    dailyRateMinor: null,
    dailySpreadMinor: null,
    spend: { projectedMinor: delivered, lowMinor: delivered, highMinor: delivered },
    impressions: { projected: deliveredImpressions, low: deliveredImpressions, high: deliveredImpressions },
    ...classify(i, tolerance, reported, lastKnown, [], delivered),
  });
  if (daysRemaining === 0) return settled('final');
  if (i.idle) return settled('idle');
  if (window.length < OUTLOOK_MIN_DAYS) {
    const rest = Math.round((i.budgetMinor * daysRemaining) / flightDays);
    const path = upcoming.map(() => rest / daysRemaining);
    return {
      ...base,
      basis: 'plan',
      dailyRateMinor: null,
      dailySpreadMinor: null,
      spend: { projectedMinor: delivered + rest, lowMinor: null, highMinor: null },
      impressions: { projected: deliveredImpressions + Math.round(rest * perImpression), low: null, high: null },
      ...classify(i, tolerance, reported, lastKnown, path, delivered + rest),
    };
  }

  const r = measure(window);
  const cap = i.dailyCapMinor ?? Infinity;
  const perDay = upcoming.map((w) => Math.min(cap, r.byWeekday[w]!));
  const rest = perDay.reduce((s, x) => s + x, 0);
  // Each day to come varies by the measured spread; each mean it is drawn from is itself uncertain
  // (its variance over the days it was measured on), and that error repeats on every day using it.
  const count = [0, 0, 0, 0, 0, 0, 0];
  for (const w of upcoming) count[r.basis === 'weekday-rate' ? w : 0]!++;
  let variance = perDay.reduce((s, x) => s + (x * r.relSpread) ** 2, 0);
  for (let w = 0; w < 7; w++) {
    const mu = r.byWeekday[w]!;
    if (count[w]) variance += (count[w]! ** 2 * (mu * r.relSpread) ** 2) / Math.max(1, r.seen[w]!);
  }
  const half = t90(r.df) * Math.sqrt(variance);
  const projectedMinor = Math.round(delivered + rest);
  const lowMinor = Math.round(delivered + Math.max(0, rest - half));
  // A capped line cannot spend more than its cap on any day to come.
  const highMinor = Math.round(delivered + Math.min(rest + half, cap * daysRemaining));
  const imp = (minor: number) => deliveredImpressions + Math.round((minor - delivered) * perImpression);
  return {
    ...base,
    basis: r.basis,
    dailyRateMinor: Math.round(r.rate),
    dailySpreadMinor: Math.round(r.rate * r.relSpread),
    spend: { projectedMinor, lowMinor, highMinor },
    impressions: { projected: imp(projectedMinor), low: imp(lowMinor), high: imp(highMinor) },
    ...classify(i, tolerance, reported, lastKnown, perDay, projectedMinor),
  };
}

/** The classification from the actual days and the projected ones that follow them. */
function classify(
  i: OutlookInput,
  tolerance: number,
  reported: readonly OutlookDay[],
  lastKnown: string,
  projected: readonly number[],
  endMinor: number,
): { classification: OutlookClass; exhaustionDate: string | null } {
  const runsOut = (date: string) =>
    date < i.endDate
      ? { classification: 'early-exhaustion' as const, exhaustionDate: date }
      : { classification: 'on-track' as const, exhaustionDate: null };
  let running = 0;
  if (i.budgetMinor > 0) {
    for (const d of reported) if ((running += d.spendMinor) >= i.budgetMinor) return runsOut(d.date);
    for (let k = 0; k < projected.length; k++) if ((running += projected[k]!) >= i.budgetMinor) return runsOut(addDays(lastKnown, k + 1));
  }
  // In basis points, like pacing, so a shortfall exactly at the tolerance is on track.
  const short = i.budgetMinor > 0 ? Math.round(((i.budgetMinor - endMinor) / i.budgetMinor) * 10_000) : 0;
  return { classification: short > Math.round(tolerance * 10_000) ? 'under-delivery' : 'on-track', exhaustionDate: null };
}

/** A campaign's outlook from its lines': the sums, the intervals' half-widths added in quadrature (lines vary independently). */
export function campaignOutlookOf(lines: ReadonlyArray<{ budgetMinor: number; outlook: Outlook }>, tolerance: number): CampaignOutlook {
  const sum = (f: (o: Outlook) => number) => lines.reduce((s, l) => s + f(l.outlook), 0);
  const budgetMinor = lines.reduce((s, l) => s + l.budgetMinor, 0);
  const projectedMinor = sum((o) => o.spend.projectedMinor);
  const measured = lines.every((l) => l.outlook.spend.lowMinor !== null && l.outlook.spend.highMinor !== null);
  const quad = (f: (o: Outlook) => number) => Math.sqrt(sum((o) => f(o) ** 2));
  const lowMinor = measured ? Math.round(projectedMinor - quad((o) => o.spend.projectedMinor - o.spend.lowMinor!)) : null;
  const highMinor = measured ? Math.round(projectedMinor + quad((o) => o.spend.highMinor! - o.spend.projectedMinor)) : null;
  const exhausting = lines
    .map((l) => l.outlook.exhaustionDate)
    .filter((d): d is string => d !== null)
    .sort();
  const short = budgetMinor > 0 ? Math.round(((budgetMinor - projectedMinor) / budgetMinor) * 10_000) : 0;
  const classification: OutlookClass = exhausting.length
    ? 'early-exhaustion'
    : short > Math.round(tolerance * 10_000)
      ? 'under-delivery'
      : 'on-track';
  return {
    level: OUTLOOK_LEVEL,
    spend: { projectedMinor, lowMinor, highMinor },
    impressions: { projected: sum((o) => o.impressions.projected) },
    classification,
    exhaustionDate: exhausting[0] ?? null,
  };
}

export const CampaignOutlookSchema = z.object({
  level: z.number(),
  spend: z.object(Range),
  impressions: z.object({ projected: z.number().int() }),
  /** `early-exhaustion` when any line is expected to spend its budget early (the earliest such day), else from the totals. */
  classification: z.enum(OUTLOOK_CLASSES),
  exhaustionDate: z.string().nullable(),
});
export type CampaignOutlook = z.infer<typeof CampaignOutlookSchema>;
