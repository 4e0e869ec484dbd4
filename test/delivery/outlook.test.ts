import { campaignOutlookOf, outlookOf } from '../../shared/delivery/outlook';
import { addDays } from '../../shared/dates';

// A 20-day flight of 20,000 from a Monday: 1,000 a day is on track.
const flight = { budgetMinor: 20_000, startDate: '2099-03-02', endDate: '2099-03-21', idle: false };
const steady = (n: number, perDay: (k: number) => number) =>
  Array.from({ length: n }, (_, k) => ({ date: addDays(flight.startDate, k), spendMinor: perDay(k), impressions: perDay(k) * 2 }));

describe('the outlook of one line', () => {
  test('before three days are in it is the plan: the rest of the budget at an even pace, no interval', () => {
    const o = outlookOf({ ...flight, through: '2099-03-03', days: steady(2, () => 400) }, 0.15);
    expect(o).toMatchObject({
      basis: 'plan',
      daysObserved: 2,
      daysRemaining: 18,
      spend: { projectedMinor: 800 + 18_000, lowMinor: null, highMinor: null },
    });
    expect(o.classification).toBe('on-track');
  });

  test('a steady rate projects itself with a narrow interval; a slow one is under-delivery; a fast one exhausts on the day it reaches the budget', () => {
    const onTrack = outlookOf({ ...flight, through: '2099-03-11', days: steady(10, (k) => 980 + (k % 3) * 20) }, 0.15);
    expect(onTrack).toMatchObject({
      basis: 'recent-rate',
      daysObserved: 10,
      daysRemaining: 10,
      dailyRateMinor: 998,
      classification: 'on-track',
    });
    expect(onTrack.spend.projectedMinor).toBe(9_980 + 9_980);
    expect(onTrack.spend.lowMinor!).toBeLessThan(onTrack.spend.projectedMinor);
    expect(onTrack.spend.highMinor! - onTrack.spend.lowMinor!).toBeLessThan(1_000);
    // Impressions follow the spend at the cost delivered so far.
    expect(onTrack.impressions.projected).toBe(onTrack.spend.projectedMinor * 2);

    const slow = outlookOf({ ...flight, through: '2099-03-11', days: steady(10, () => 700) }, 0.15);
    expect(slow).toMatchObject({ classification: 'under-delivery', exhaustionDate: null, spend: { projectedMinor: 14_000 } });

    // 1,600 a day: 16,000 in ten days, the budget reached on the 13th day (the 14th of March).
    const fast = outlookOf({ ...flight, through: '2099-03-11', days: steady(10, () => 1_600) }, 0.15);
    expect(fast).toMatchObject({ classification: 'early-exhaustion', exhaustionDate: '2099-03-14', spend: { projectedMinor: 32_000 } });
  });

  test('from two weeks each weekday keeps its own rate: a line that never spends at weekends projects no weekend spend', () => {
    const weekdaysOnly = (k: number) => ([5, 6].includes(k % 7) ? 0 : 1_400);
    const o = outlookOf({ ...flight, through: '2099-03-15', days: steady(14, weekdaysOnly) }, 0.15);
    expect(o.basis).toBe('weekday-rate');
    // Six days remain: Monday to Friday, then Saturday.
    expect(o.spend.projectedMinor).toBe(14_000 + 5 * 1_400);
  });

  test('a paused line spends no more; a flight that is over is what it delivered', () => {
    const paused = outlookOf({ ...flight, idle: true, through: '2099-03-11', days: steady(10, () => 1_000) }, 0.15);
    expect(paused).toMatchObject({
      basis: 'idle',
      classification: 'under-delivery',
      spend: { projectedMinor: 10_000, lowMinor: 10_000, highMinor: 10_000 },
    });
    const over = outlookOf({ ...flight, through: '2099-04-30', days: steady(20, () => 990) }, 0.15);
    expect(over).toMatchObject({ basis: 'final', daysRemaining: 0, classification: 'on-track', spend: { projectedMinor: 19_800 } });
  });

  test('late days count as still to come: the projection starts after the last day reported', () => {
    const o = outlookOf({ ...flight, through: '2099-03-11', days: steady(7, () => 1_000) }, 0.15);
    expect(o.daysRemaining).toBe(13);
    expect(o.spend.projectedMinor).toBe(20_000);
  });
});

test("a campaign's outlook adds its lines', the intervals in quadrature, and names the earliest exhaustion", () => {
  const a = outlookOf({ ...flight, through: '2099-03-11', days: steady(10, (k) => 950 + (k % 2) * 100) }, 0.15);
  const b = outlookOf({ ...flight, through: '2099-03-11', days: steady(10, (k) => 1_550 + (k % 2) * 100) }, 0.15);
  const c = campaignOutlookOf(
    [
      { budgetMinor: 20_000, outlook: a },
      { budgetMinor: 20_000, outlook: b },
    ],
    0.15,
  );
  expect(c.spend.projectedMinor).toBe(a.spend.projectedMinor + b.spend.projectedMinor);
  const half = (o: typeof a) => o.spend.highMinor! - o.spend.projectedMinor;
  expect(c.spend.highMinor! - c.spend.projectedMinor).toBeCloseTo(Math.hypot(half(a), half(b)), -1);
  expect(c).toMatchObject({ classification: 'early-exhaustion', exhaustionDate: b.exhaustionDate });
});
