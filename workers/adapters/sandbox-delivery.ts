import { createHash } from 'node:crypto';
import type { AdapterContext, DeliveryDay, DeliveryReport, DeliveryReporter, LineAtSupplier } from '../../shared/adapters/adapter';
import { addDays, dateOnly, daysFrom } from '../../shared/dates';
import type { AdapterDescriptor } from '../../shared/adapters/catalogue';
import { recordReceipt, supplierOperations } from './sandbox-ledger';
import { DAILY_CAP_OPERATION, knownCap, plannedDays, timelineOf, type SupplierTimeline } from './sandbox-timeline';

/**
 * A sandbox supplier's delivery: a deterministic curve over the flight, seeded by the line.
 * Each day's share of the budget follows the weekday (weekends lighter) with a little noise
 * from the line id and the date; the shares are rounded so the flight delivers its budget
 * exactly. Days are reported once they are over, on the supplier's clock (the workspace's
 * sandbox test clock). Like the booking triggers, the budget's last two digits pick a behaviour
 * (docs/delivery.md, Sandbox triggers):
 *   …71 under-delivers (60% of budget) · …72 over-delivers (125%) · …73 late data (days arrive 3 days late)
 *   …74 restates (a day first reports 80%, then its full figure from three days after it) · …75 outage (every fetch fails)
 *   …76 restates a final day (90% of it, five days after it) · …77 never makes good.
 *   …78 ignores pause and stop (keeps delivering as if running) · …79 ignores budget and end-date changes.
 * It honours every operation it carried out from the day it took effect on (`sandbox-timeline.ts`):
 * nothing while paused or after a stop, a budget or end date from its day on; a reported day is never
 * restated unless a trigger says so. The digits are the booked budget's. A supplier that caps natively
 * (`capsNatively`: search and social) holds each day to the line's daily cap: the cap booked with the
 * line, and a changed one from the day it is named in a delivery call on (it records a `daily-cap`
 * receipt then); its other days take what the cap held back, up to the cap.
 * A day is called final once it is three days old. Asked about days after the flight (a make-good
 * is owed), it runs the make-good: each such day a zero-cost day of the flight's average impressions.
 */
export const SANDBOX_DELIVERY_TRIGGERS = {
  under: 71,
  over: 72,
  late: 73,
  restate: 74,
  outage: 75,
  restateFinal: 76,
  noMakegood: 77,
  ignoresPauseAndStop: 78,
  ignoresBudgetAndEnd: 79,
} as const;
export type DeliveryBehaviour = keyof typeof SANDBOX_DELIVERY_TRIGGERS | 'normal';

export function deliveryBehaviour(budgetMinor: number): DeliveryBehaviour {
  const digits = budgetMinor % 100;
  for (const [name, value] of Object.entries(SANDBOX_DELIVERY_TRIGGERS)) if (value === digits) return name as DeliveryBehaviour;
  return 'normal';
}

/** Monday first: busier midweek, lighter at the weekend. */
const WEEKDAY = [1.0, 1.06, 1.1, 1.1, 1.04, 0.86, 0.84];
/** Cost per thousand impressions, by channel, in minor units; click and completion rates. */
const CPM: Record<string, number> = { ctv: 3_200, audio: 1_400, tv: 2_600, cinema: 4_500, dooh: 900, search: 1_800, social: 700 };
const CTR: Record<string, number> = { search: 0.03, social: 0.008 };
const COMPLETION: Record<string, number> = { ctv: 0.93, audio: 0.88, tv: 0.97, cinema: 0.99 };

export class SupplierUnavailable extends Error {
  override readonly name = 'SupplierUnavailable';
}

/** A number in [0, 1) from the line and the day: the same every time. */
function unit(lineId: string, day: string): number {
  return createHash('sha256').update(`${lineId}|${day}`).digest().readUInt32BE(0) / 2 ** 32;
}

/** The whole flight's daily spend, summing exactly to `total`. */
export function flightSpend(
  lineId: string,
  startDate: string,
  endDate: string,
  total: number,
): Array<{ date: string; spendMinor: number }> {
  const n = daysFrom(startDate, endDate) + 1;
  if (n <= 0) return [];
  const dates = Array.from({ length: n }, (_, i) => addDays(startDate, i));
  const weights = dates.map((d) => {
    const weekday = (new Date(`${d}T00:00:00Z`).getUTCDay() + 6) % 7;
    return WEEKDAY[weekday]! * (0.95 + 0.1 * unit(lineId, d));
  });
  const sum = weights.reduce((a, b) => a + b, 0);
  // Rounded on the running total, so the days add up to the total exactly.
  let before = 0;
  let acc = 0;
  return dates.map((date, i) => {
    acc += weights[i]!;
    const upTo = Math.round((total * acc) / sum);
    const spendMinor = upTo - before;
    before = upTo;
    return { date, spendMinor };
  });
}

export function dayFigures(channel: string, date: string, spendMinor: number, lineId: string): DeliveryDay {
  const cpm = CPM[channel] ?? 2_000;
  const impressions = Math.round((spendMinor * 1000) / cpm);
  const ctr = (CTR[channel] ?? 0.001) * (0.9 + 0.2 * unit(lineId, `${date}:c`));
  return {
    date,
    impressions,
    clicks: Math.round(impressions * ctr),
    completions: Math.round(impressions * (COMPLETION[channel] ?? 0)),
    spendMinor,
  };
}

const SHARE: Record<DeliveryBehaviour, number> = {
  normal: 1,
  under: 0.6,
  over: 1.25,
  late: 1,
  restate: 1,
  outage: 1,
  restateFinal: 1,
  noMakegood: 1,
  ignoresPauseAndStop: 1,
  ignoresBudgetAndEnd: 1,
};
/** Days after which the sandbox seller calls a day's figures final. */
export const SANDBOX_FINAL_AFTER_DAYS = 3;

/**
 * What the sandbox supplier reports for `line` on days `fromDate`..`toDate`, as of `now`, given
 * what it was told (`timeline`; without one, the line as booked on its first day and never changed).
 */
export function sandboxDelivery(
  line: LineAtSupplier,
  fromDate: string,
  toDate: string,
  now: Date,
  timeline: SupplierTimeline | null = null,
): DeliveryReport {
  const behaviour = deliveryBehaviour(timeline?.bookedBudgetMinor ?? line.budgetMinor);
  if (behaviour === 'outage') throw new SupplierUnavailable('Sandbox supplier reporting is unavailable.');
  const today = dateOnly(now);
  // Days that are over; late data arrives three days after the day.
  const lastReported = addDays(today, behaviour === 'late' ? -3 : -1);
  const planned = plannedDays(
    line,
    timeline,
    SHARE[behaviour],
    { ignoresPauseAndStop: behaviour === 'ignoresPauseAndStop', ignoresBudgetAndEnd: behaviour === 'ignoresBudgetAndEnd' },
    (from, to, total) => flightSpend(line.lineId, from, to, total),
  );
  const flight = planned.days;
  const days = flight
    .filter((d) => d.date >= fromDate && d.date <= toDate && d.date <= lastReported)
    .map((d) => {
      const age = daysFrom(d.date, today);
      const provisional = behaviour === 'restate' && age < 3;
      const restatedAfterFinal = behaviour === 'restateFinal' && age >= 5;
      const spend = provisional ? Math.round(d.spendMinor * 0.8) : restatedAfterFinal ? Math.round(d.spendMinor * 0.9) : d.spendMinor;
      return { ...dayFigures(line.channel, d.date, spend, line.lineId), final: age >= SANDBOX_FINAL_AFTER_DAYS };
    });
  const ended = { ...line, endDate: planned.endDate };
  return { asOf: now.toISOString(), days: [...days, ...makegoodDays(ended, flight, fromDate, toDate, lastReported, behaviour)] };
}

/** Days after the flight it is asked about: the make-good it owes, at no cost (never, for …77). */
function makegoodDays(
  line: LineAtSupplier,
  flight: Array<{ date: string; spendMinor: number }>,
  fromDate: string,
  toDate: string,
  lastReported: string,
  behaviour: DeliveryBehaviour,
): DeliveryDay[] {
  if (behaviour === 'noMakegood' || !flight.length) return [];
  const perDay = Math.round(
    flight.reduce((s, d) => s + dayFigures(line.channel, d.date, d.spendMinor, line.lineId).impressions, 0) / flight.length,
  );
  const out: DeliveryDay[] = [];
  const until = toDate < lastReported ? toDate : lastReported;
  for (let date = addDays(line.endDate, 1) > fromDate ? addDays(line.endDate, 1) : fromDate; date <= until; date = addDays(date, 1)) {
    out.push({ date, impressions: perDay, clicks: 0, completions: 0, spendMinor: 0 });
  }
  return out;
}

/** A sandbox supplier's delivery reporting; one that caps natively learns a changed cap when asked about the line. */
export function sandboxReporter(descriptor: AdapterDescriptor): DeliveryReporter {
  return {
    async delivery(line: LineAtSupplier, fromDate: string, toDate: string, ctx: AdapterContext): Promise<DeliveryReport> {
      let ops = await supplierOperations(ctx.db, line.lineId);
      const now = ctx.now ?? new Date();
      const known = knownCap(ops);
      if (descriptor.capsNatively && known !== undefined && line.dailyCapMinor !== undefined && line.dailyCapMinor !== known) {
        await recordReceipt(ctx.db, {
          adapterKey: descriptor.key,
          operation: DAILY_CAP_OPERATION,
          idempotencyKey: `daily-cap-${line.lineId}`,
          lineId: line.lineId,
          request: { dailyCapMinor: line.dailyCapMinor },
          outcome: 'applied',
          providerReference: null,
          effectiveAt: now,
        });
        ops = await supplierOperations(ctx.db, line.lineId);
      }
      return sandboxDelivery(line, fromDate, toDate, now, timelineOf(ops, { caps: descriptor.capsNatively }));
    },
  };
}
