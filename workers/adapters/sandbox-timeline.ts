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
  /** The daily cap the line was booked with, for a supplier that caps natively (null: none, or one that does not). */
  bookedCapMinor: number | null;
  changes: TimelineChange[];
}

export type TimelineChange =
  | { day: string; kind: 'pause' | 'resume' | 'stop' }
  | { day: string; kind: 'change-budget'; budgetMinor: number; endDate?: string }
  | { day: string; kind: 'daily-cap'; capMinor: number | null };

/** The receipt a supplier that caps natively records when it learns a line's changed cap. */
export const DAILY_CAP_OPERATION = 'daily-cap';

const capOf = (request: Record<string, unknown>): number | null =>
  typeof request.dailyCapMinor === 'number' ? request.dailyCapMinor : null;

/**
 * The line's timeline from its ledger: the booking (or paused creation) and the operations carried
 * out after it. `caps`: the supplier holds lines to their daily caps (else their caps are not its concern).
 */
export function timelineOf(ops: SupplierOperation[], opts: { caps?: boolean } = {}): SupplierTimeline | null {
  const booking = ops.find((o) => o.operation === 'book' || o.operation === 'create-paused');
  if (!booking) return null;
  const changes: TimelineChange[] = [];
  for (const o of ops) {
    const day = dateOnly(o.effectiveAt);
    if (o.operation === 'pause' || o.operation === 'resume' || o.operation === 'stop') changes.push({ day, kind: o.operation });
    else if (o.operation === 'change-budget') {
      const endDate = typeof o.request.newEndDate === 'string' ? o.request.newEndDate : undefined;
      changes.push({ day, kind: 'change-budget', budgetMinor: Number(o.request.newBudgetMinor), ...(endDate ? { endDate } : {}) });
    } else if (o.operation === DAILY_CAP_OPERATION && opts.caps) changes.push({ day, kind: 'daily-cap', capMinor: capOf(o.request) });
  }
  return {
    bookedBudgetMinor: Number(booking.request.budgetMinor),
    bookedOn: dateOnly(booking.effectiveAt),
    createdPaused: booking.operation === 'create-paused',
    bookedCapMinor: opts.caps ? capOf(booking.request) : null,
    changes,
  };
}

/** The cap the supplier last learned for the line (at booking or since); undefined when it was never booked. */
export function knownCap(ops: SupplierOperation[]): number | null | undefined {
  const told = ops.filter((o) => o.operation === 'book' || o.operation === 'create-paused' || o.operation === DAILY_CAP_OPERATION);
  return told.length ? capOf(told.at(-1)!.request) : undefined;
}

/**
 * Days held to a daily cap, as a supplier that caps natively paces them: a day planned over the cap
 * spends the cap, and what it held back goes to the days under it (in proportion to their plan),
 * until none is over or every day is at the cap (the line then delivers less than its budget).
 */
export function capDays(
  days: Array<{ date: string; spendMinor: number }>,
  cap: number | null,
): Array<{ date: string; spendMinor: number }> {
  if (cap === null) return days;
  const out = days.map((d) => ({ ...d }));
  for (;;) {
    let held = 0;
    for (const d of out) {
      if (d.spendMinor > cap) {
        held += d.spendMinor - cap;
        d.spendMinor = cap;
      }
    }
    const room = out.filter((d) => d.spendMinor < cap);
    if (held === 0 || room.length === 0) return out;
    const weight = room.reduce((s, d) => s + d.spendMinor + 1, 0);
    // Rounded on the running total, so the days take exactly what was held back.
    let acc = 0;
    let before = 0;
    for (const d of room) {
      acc += d.spendMinor + 1;
      const upTo = Math.round((held * acc) / weight);
      d.spendMinor += upTo - before;
      before = upTo;
    }
  }
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
 * deliver nothing. A line held to a daily cap (a supplier that caps natively) never spends more
 * than it on a day (`capDays`), from the day the supplier learned it. `spread(from, to, total)` is the curve.
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
  let cap = timeline?.bookedCapMinor ?? null;
  let cursor = start;
  let delivered = 0;
  const out: Array<{ date: string; spendMinor: number }> = [];
  let plan = capDays(spread(cursor, end, Math.round(budget * share)), cap);
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
    } else if (change.kind === 'daily-cap') {
      cap = change.capMinor;
    } else if (!obey.ignoresPauseAndStop) {
      if (change.kind === 'stop') stopped = true;
      running = change.kind === 'resume' && !stopped;
    } else continue;
    plan = capDays(spread(cursor, end, Math.max(0, Math.round(budget * share) - delivered)), cap);
  }
  deliverUntil(addDays(end, 1));
  return { days: out, endDate: end };
}
