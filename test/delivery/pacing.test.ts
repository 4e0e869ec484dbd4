import { pacingOf } from '../../shared/delivery/pacing';
import { flightSpend, sandboxDelivery } from '../../workers/adapters/sandbox-delivery';

// A 10-day flight of 10,000: 1,000 a day is on pace.
const flight = { budgetMinor: 10_000, startDate: '2099-03-01', endDate: '2099-03-10', idle: false };

describe('pacing', () => {
  test('before the first day is over nothing is expected: on track, projected at the budget', () => {
    expect(pacingOf({ ...flight, deliveredMinor: 0, through: '2099-02-28' }, 0.15)).toEqual({
      expectedSpendMinor: 0,
      ratio: null,
      status: 'on-track',
      projectedSpendMinor: 10_000,
    });
  });

  test('in the middle of the flight: expected is the elapsed share, the projection keeps the pace', () => {
    expect(pacingOf({ ...flight, deliveredMinor: 4_000, through: '2099-03-04' }, 0.15)).toEqual({
      expectedSpendMinor: 4_000,
      ratio: 1,
      status: 'on-track',
      projectedSpendMinor: 10_000,
    });
    expect(pacingOf({ ...flight, deliveredMinor: 3_000, through: '2099-03-04' }, 0.15)).toMatchObject({
      ratio: 0.75,
      status: 'under',
      projectedSpendMinor: 7_500,
    });
    expect(pacingOf({ ...flight, deliveredMinor: 5_000, through: '2099-03-04' }, 0.15)).toMatchObject({ ratio: 1.25, status: 'over' });
    // Just inside the tolerance is on track.
    expect(pacingOf({ ...flight, deliveredMinor: 3_400, through: '2099-03-04' }, 0.15)).toMatchObject({ ratio: 0.85, status: 'on-track' });
  });

  test('at and after the end of the flight: expected is the whole budget, the projection is what was delivered', () => {
    const end = pacingOf({ ...flight, deliveredMinor: 9_000, through: '2099-03-10' }, 0.15);
    expect(end).toEqual({ expectedSpendMinor: 10_000, ratio: 0.9, status: 'on-track', projectedSpendMinor: 9_000 });
    expect(pacingOf({ ...flight, deliveredMinor: 9_000, through: '2099-04-30' }, 0.15)).toEqual(end);
  });

  test('a paused line is expected to keep pace but projects no further spend', () => {
    expect(pacingOf({ ...flight, idle: true, deliveredMinor: 3_000, through: '2099-03-05' }, 0.15)).toEqual({
      expectedSpendMinor: 5_000,
      ratio: 0.6,
      status: 'under',
      projectedSpendMinor: 3_000,
    });
  });
});

describe('sandbox delivery curves', () => {
  const line = {
    bookingId: '00000000-0000-4000-8000-000000000001',
    lineId: '00000000-0000-4000-8000-000000000002',
    channel: 'ctv',
    executionMode: 'sandbox' as const,
    channelCampaignId: 'cc-1',
    providerReference: null,
    bookingAttemptId: null,
    startDate: '2099-03-01',
    endDate: '2099-03-28',
  };
  const at = (day: string) => new Date(`${day}T12:00:00Z`);
  const spend = (budgetMinor: number, now: string) =>
    sandboxDelivery({ ...line, budgetMinor }, '2099-03-01', '2099-03-28', at(now)).days.reduce((s, d) => s + d.spendMinor, 0);

  test('a flight delivers its budget exactly, lighter at weekends, the same every time', () => {
    const days = flightSpend(line.lineId, line.startDate, line.endDate, 280_000);
    expect(days.reduce((s, d) => s + d.spendMinor, 0)).toBe(280_000);
    expect(flightSpend(line.lineId, line.startDate, line.endDate, 280_000)).toEqual(days);
    const weekday = (d: string) => new Date(`${d}T00:00:00Z`).getUTCDay();
    const avg = (f: (w: number) => boolean) => {
      const xs = days.filter((d) => f(weekday(d.date)));
      return xs.reduce((s, d) => s + d.spendMinor, 0) / xs.length;
    };
    expect(avg((w) => w === 0 || w === 6)).toBeLessThan(avg((w) => w >= 2 && w <= 4) * 0.9);
  });

  test('days are reported once over; the triggers under-deliver, over-deliver, arrive late, restate and fail', () => {
    expect(sandboxDelivery({ ...line, budgetMinor: 280_000 }, '2099-03-01', '2099-03-28', at('2099-03-01')).days).toEqual([]);
    expect(spend(280_000, '2099-03-29')).toBe(280_000);
    expect(spend(280_071, '2099-03-29')).toBe(Math.round(280_071 * 0.6));
    expect(spend(280_072, '2099-03-29')).toBe(Math.round(280_072 * 1.25));
    // Late: on the 11th only days up to the 8th are in.
    const late = sandboxDelivery({ ...line, budgetMinor: 280_073 }, '2099-03-01', '2099-03-28', at('2099-03-11'));
    expect(late.days.at(-1)!.date).toBe('2099-03-08');
    // Restated: the 10th first reports 80%, then its full figure.
    const first = sandboxDelivery({ ...line, budgetMinor: 280_074 }, '2099-03-10', '2099-03-10', at('2099-03-11')).days[0]!;
    const final = sandboxDelivery({ ...line, budgetMinor: 280_074 }, '2099-03-10', '2099-03-10', at('2099-03-13')).days[0]!;
    expect(first.spendMinor).toBe(Math.round(final.spendMinor * 0.8));
    expect(() => sandboxDelivery({ ...line, budgetMinor: 280_075 }, '2099-03-01', '2099-03-28', at('2099-03-11'))).toThrow(/unavailable/);
  });
});
