import { z } from 'zod';
import { daysFrom } from '../dates';

export const PacingSchema = z.object({
  /** What a line spending its budget evenly over the flight would have spent by the last day reported on. */
  expectedSpendMinor: z.number().int(),
  /** Delivered over expected; null before the flight's first day is over. */
  ratio: z.number().nullable(),
  status: z.enum(['on-track', 'under', 'over']),
  /** Where the flight ends if the line keeps its pace (a paused or ended line stays where it is). */
  projectedSpendMinor: z.number().int(),
});
export type Pacing = z.infer<typeof PacingSchema>;

export interface PacingInput {
  budgetMinor: number;
  startDate: string;
  endDate: string;
  deliveredMinor: number;
  /** The last day that is over, on the line's clock. */
  through: string;
  /** Paused or ended: it will not spend more unless resumed. */
  idle: boolean;
}

/**
 * Even pacing: by the end of day k of an n-day flight a line should have spent k/n of its budget.
 * Off pace is a ratio outside 1 ± tolerance.
 */
export function pacingOf(i: PacingInput, tolerance: number): Pacing {
  const flightDays = daysFrom(i.startDate, i.endDate) + 1;
  const elapsed = Math.min(Math.max(daysFrom(i.startDate, i.through) + 1, 0), flightDays);
  const expectedSpendMinor = Math.round((i.budgetMinor * elapsed) / flightDays);
  const ratio = expectedSpendMinor > 0 ? Math.round((i.deliveredMinor / expectedSpendMinor) * 10_000) / 10_000 : null;
  // In basis points, so a ratio exactly at the tolerance is on track (0.85 - 1 is not -0.15 in floating point).
  const off = ratio === null ? 0 : Math.round(ratio * 10_000) - 10_000;
  const status = Math.abs(off) <= Math.round(tolerance * 10_000) ? 'on-track' : off < 0 ? 'under' : 'over';
  let projectedSpendMinor: number;
  if (i.idle || elapsed >= flightDays) projectedSpendMinor = i.deliveredMinor;
  else if (elapsed === 0) projectedSpendMinor = i.budgetMinor;
  else projectedSpendMinor = Math.round((i.deliveredMinor * flightDays) / elapsed);
  return { expectedSpendMinor, ratio, status, projectedSpendMinor };
}
