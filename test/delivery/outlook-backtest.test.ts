import { OUTLOOK_LEVEL, outlookOf, type Outlook } from '../../shared/delivery/outlook';
import { addDays, daysFrom } from '../../shared/dates';
import { deliveryBehaviour, sandboxDelivery } from '../../workers/adapters/sandbox-delivery';

/**
 * The outlook against the sandbox suppliers, whose curves are known (a weekday pattern, daily
 * noise, the triggers' shares of the budget): many simulated flights, each read on the sandbox
 * clock part way through (what the supplier had reported by then) and at its end (what it
 * delivered). The interval must cover the final spend at the rate it states.
 */
const FLIGHTS = 360;
const CUTS = [0.2, 0.45, 0.7, 0.9];
const id = (n: number, k: number) => `00000000-0000-4000-8000-${String(n * 10 + k).padStart(12, '0')}`;
const clockAt = (day: string) => new Date(`${day}T09:00:00Z`);

interface Reading {
  flight: number;
  behaviour: string;
  outlook: Outlook;
  finalMinor: number;
  budgetMinor: number;
  crossed: string | null;
}

function simulate(): Reading[] {
  const out: Reading[] = [];
  for (let n = 0; n < FLIGHTS; n++) {
    const length = 14 + ((n * 7) % 48); // 14 to 61 days
    const startDate = addDays('2099-01-05', n % 7); // every weekday
    const endDate = addDays(startDate, length - 1);
    const budgetMinor = 50_000 + 1_000 * n + [0, 71, 72][n % 3]!; // normal, under-delivering, over-delivering
    const line = {
      bookingId: id(n, 1),
      lineId: id(n, 2),
      channel: ['ctv', 'audio', 'dooh', 'search', 'social'][n % 5]!,
      executionMode: 'sandbox' as const,
      channelCampaignId: `cc-${n}`,
      providerReference: null,
      bookingAttemptId: null,
      startDate,
      endDate,
      budgetMinor,
    };
    const final = sandboxDelivery(line, startDate, endDate, clockAt(addDays(endDate, 1))).days;
    const finalMinor = final.reduce((s, d) => s + d.spendMinor, 0);
    let running = 0;
    const crossed = final.find((d) => (running += d.spendMinor) >= budgetMinor)?.date ?? null;
    for (const cut of CUTS) {
      const today = addDays(startDate, Math.max(1, Math.round(length * cut)));
      const days = sandboxDelivery(line, startDate, endDate, clockAt(today)).days;
      const outlook = outlookOf({ budgetMinor, startDate, endDate, through: addDays(today, -1), days, idle: false }, 0.15);
      out.push({ flight: n, behaviour: deliveryBehaviour(budgetMinor), outlook, finalMinor, budgetMinor, crossed });
    }
  }
  return out;
}

const readings = simulate();
const covered = (r: Reading) => r.finalMinor >= r.outlook.spend.lowMinor! && r.finalMinor <= r.outlook.spend.highMinor!;
/** Three standard errors of a proportion at the stated level, counting only the distinct flights (readings of one flight are not independent). */
const tolerance = (rs: Reading[]) => 3 * Math.sqrt((OUTLOOK_LEVEL * (1 - OUTLOOK_LEVEL)) / new Set(rs.map((r) => r.flight)).size);
const rate = (rs: Reading[], f: (r: Reading) => boolean) => rs.filter(f).length / rs.length;

describe('outlook backtest over sandbox flights on the test clock', () => {
  test('with the weekday pattern measured, the interval covers the final spend at its stated rate', () => {
    const weekday = readings.filter((r) => r.outlook.basis === 'weekday-rate');
    expect(weekday.length).toBeGreaterThan(400);
    expect(Math.abs(rate(weekday, covered) - OUTLOOK_LEVEL)).toBeLessThanOrEqual(tolerance(weekday));
    // Every interval holds its projection, and it is no band of nothing.
    for (const r of weekday) {
      expect(r.outlook.spend.lowMinor!).toBeLessThanOrEqual(r.outlook.spend.projectedMinor);
      expect(r.outlook.spend.highMinor!).toBeGreaterThan(r.outlook.spend.projectedMinor);
    }
  });

  test('before two weeks are in, the interval covers at least its stated rate (the weekday swing counts as noise, so it is wider)', () => {
    const recent = readings.filter((r) => r.outlook.basis === 'recent-rate');
    expect(recent.length).toBeGreaterThan(200);
    expect(rate(recent, covered)).toBeGreaterThanOrEqual(OUTLOOK_LEVEL - tolerance(recent));
  });

  test('from halfway, the classification names what the supplier does: under-delivery, early exhaustion (near the day it happens), on track', () => {
    const late = readings.filter((r) => r.outlook.daysObserved >= 14 && r.outlook.daysRemaining >= 3);
    const of = (b: string) => late.filter((r) => r.behaviour === b);
    expect(of('under').every((r) => r.outlook.classification === 'under-delivery')).toBe(true);
    expect(of('normal').every((r) => r.outlook.classification === 'on-track')).toBe(true);
    const over = of('over');
    expect(over.length).toBeGreaterThan(50);
    expect(over.every((r) => r.outlook.classification === 'early-exhaustion')).toBe(true);
    // The day exhaustion is expected is within two days of the day the budget was in fact spent.
    expect(rate(over, (r) => Math.abs(daysFrom(r.crossed!, r.outlook.exhaustionDate!)) <= 2)).toBeGreaterThanOrEqual(0.9);
  });
});
