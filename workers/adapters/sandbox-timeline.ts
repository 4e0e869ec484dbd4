import { addDays, dateOnly } from '../../shared/dates';
import type { SupplierOperation } from './sandbox-ledger';

/**
 * What a sandbox supplier was told about a line, as the days its delivery follows: the booking
 * and each operation it carried out, from the supplier's day it took effect on (its clock when
 * received). The delivery curve is planned again at each of them, so an operation changes the
 * days from then on and never a day before it.
 */
export interface SupplierTimeline {
  /** The budget the line was booked with (whose last digits pick the delivery behaviour). */
  bookedBudgetMinor: number;
  /** The supplier's day the line was booked on: a flight that had started delivers from then. */
  bookedOn: string | null;
  /** Created paused (a native staged supplier): nothing is delivered until it is enabled. */
  createdPaused: boolean;
  changes: TimelineChange[];
}

export type TimelineChange =
  { day: string; kind: 'pause' | 'resume' | 'stop' } | { day: string; kind: 'change-budget'; budgetMinor: number; endDate?: string };

/** The line's timeline from its ledger: the booking (or paused creation) and the operations carried out after it. */
export function timelineOf(ops: SupplierOperation[]): SupplierTimeline | null {
  const booking = ops.find((o) => o.operation === 'book' || o.operation === 'create-paused');
  if (!booking) return null;
  const changes: TimelineChange[] = [];
  for (const o of ops) {
    const day = dateOnly(o.effectiveAt);
    if (o.operation === 'pause' || o.operation === 'resume' || o.operation === 'stop') changes.push({ day, kind: o.operation });
    else if (o.operation === 'change-budget') {
      const endDate = typeof o.request.newEndDate === 'string' ? o.request.newEndDate : undefined;
      changes.push({ day, kind: 'change-budget', budgetMinor: Number(o.request.newBudgetMinor), ...(endDate ? { endDate } : {}) });
    }
  }
  return {
    bookedBudgetMinor: Number(booking.request.budgetMinor),
    bookedOn: dateOnly(booking.effectiveAt),
    createdPaused: booking.operation === 'create-paused',
    changes,
  };
}

/** How a misbehaving line treats what it is told (docs/delivery.md, Sandbox triggers). */
export interface Obedience {
  /** …78: keeps delivering as if running through pause and stop. */
  ignoresPauseAndStop: boolean;
  /** …79: keeps its booked budget and end date whatever it is told. */
  ignoresBudgetAndEnd: boolean;
}

/**
 * The line's days and their spend: the booked budget (times `share`) spread over the flight from
 * the day it was booked; at each change the rest of the money (what the budget now allows, less
 * what was delivered before that day) is spread over the days left. Paused and stopped days
 * deliver nothing. `spread(from, to, total)` is the curve.
 */
export function plannedDays(
  flight: { startDate: string; endDate: string; budgetMinor: number },
  timeline: SupplierTimeline | null,
  share: number,
  obey: Obedience,
  spread: (from: string, to: string, total: number) => Array<{ date: string; spendMinor: number }>,
): { days: Array<{ date: string; spendMinor: number }>; endDate: string } {
  let budget = timeline?.bookedBudgetMinor ?? flight.budgetMinor;
  let end = flight.endDate;
  const start = timeline?.bookedOn && timeline.bookedOn > flight.startDate ? timeline.bookedOn : flight.startDate;
  let running = !timeline?.createdPaused;
  let stopped = false;
  let cursor = start;
  let delivered = 0;
  const out: Array<{ date: string; spendMinor: number }> = [];
  let plan = spread(cursor, end, Math.round(budget * share));
  const deliverUntil = (day: string) => {
    for (const d of plan) {
      if (d.date < cursor || d.date >= day || d.date > end) continue;
      if (running) {
        out.push(d);
        delivered += d.spendMinor;
      }
    }
    if (day > cursor) cursor = day;
  };
  for (const change of timeline?.changes ?? []) {
    deliverUntil(change.day);
    if (change.kind === 'change-budget') {
      if (obey.ignoresBudgetAndEnd) continue;
      budget = change.budgetMinor;
      if (change.endDate) end = change.endDate;
    } else if (!obey.ignoresPauseAndStop) {
      if (change.kind === 'stop') stopped = true;
      running = change.kind === 'resume' && !stopped;
    } else continue;
    plan = spread(cursor, end, Math.max(0, Math.round(budget * share) - delivered));
  }
  deliverUntil(addDays(end, 1));
  return { days: out, endDate: end };
}
