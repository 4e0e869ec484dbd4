import { capOn, type CapChange } from '../../shared/delivery/daily-cap-history';

const change = (effectiveDay: string, fromMinor: number | null, toMinor: number | null): CapChange => ({
  lineId: null,
  effectiveDay,
  fromMinor,
  toMinor,
});

describe('the cap in force on a day', () => {
  const changes = [change('2026-03-05', 6_000, 1_000), change('2026-03-09', 1_000, null), change('2026-03-12', null, 4_000)];

  test.each([
    ['before any change: what the first change replaced', '2026-03-01', 6_000],
    ['on the day a change took effect: the new cap', '2026-03-05', 1_000],
    ['between changes: the last one in force', '2026-03-08', 1_000],
    ['a cap removed: none', '2026-03-10', null],
    ['after the last change: its cap', '2026-03-20', 4_000],
  ])('%s', (_why, day, cap) => {
    expect(capOn(day, 4_000, changes)).toBe(cap);
  });

  test('a cap never changed is the cap now, whatever the day', () => {
    expect(capOn('2026-03-01', 2_500, [])).toBe(2_500);
    expect(capOn('2026-03-01', null, [])).toBeNull();
  });
});
