import fc from 'fast-check';
import { bookingStatusOf, bookingStatusOfCounts } from '../../shared/bookings/booking-status';
import { LINE_STATUSES, canMove, isOpen, type LineStatus } from '../../shared/bookings/line-state';

const anyLines = fc.array(fc.constantFrom(...LINE_STATUSES), { minLength: 1, maxLength: 12 });

describe('booking status from line statuses', () => {
  test.each<[LineStatus[], string]>([
    [['queued', 'queued'], 'queued'],
    [['queued', 'in-progress'], 'in-progress'],
    [['confirmed', 'reconciliation-required'], 'in-progress'],
    [['confirmed', 'confirmed'], 'confirmed'],
    [['confirmed', 'rejected'], 'partially-confirmed'],
    [['confirmed', 'stopped'], 'partially-confirmed'],
    [['rejected', 'rejected'], 'rejected'],
    [['stopped'], 'stopped'],
    [['confirmed', 'stop-requested'], 'stopping'],
    [['rejected', 'stopped'], 'stopped'],
  ])('%j → %s', (lines, status) => {
    expect(bookingStatusOf(lines)).toBe(status);
  });

  test('any open line other than a stop keeps the booking in progress (or queued before anything moved)', () => {
    fc.assert(
      fc.property(anyLines, (lines) => {
        const status = bookingStatusOf(lines);
        const workOpen = lines.some((s) => isOpen(s) && s !== 'stop-requested' && s !== 'stopping');
        if (workOpen) expect(['queued', 'in-progress']).toContain(status);
        else expect(['queued', 'in-progress']).not.toContain(status);
      }),
    );
  });

  test('a booking is confirmed exactly when every line is, and rejected exactly when every line is', () => {
    fc.assert(
      fc.property(anyLines, (lines) => {
        expect(bookingStatusOf(lines) === 'confirmed').toBe(lines.every((s) => s === 'confirmed'));
        expect(bookingStatusOf(lines) === 'rejected').toBe(lines.every((s) => s === 'rejected'));
      }),
    );
  });

  test('the order of lines does not matter', () => {
    fc.assert(fc.property(anyLines, (lines) => expect(bookingStatusOf([...lines].reverse())).toBe(bookingStatusOf(lines))));
  });
});

describe('line transitions', () => {
  test('definite outcomes are final except that a confirmed line may still be stopped', () => {
    expect(LINE_STATUSES.filter((to) => canMove('rejected', to))).toEqual([]);
    expect(LINE_STATUSES.filter((to) => canMove('stopped', to))).toEqual([]);
    expect(LINE_STATUSES.filter((to) => canMove('confirmed', to))).toEqual(['stop-requested']);
  });

  test('reconciliation-required can only be settled as confirmed or rejected', () => {
    expect(LINE_STATUSES.filter((to) => canMove('reconciliation-required', to))).toEqual(['confirmed', 'rejected']);
  });

  test('only an in-progress line can become uncertain', () => {
    expect(LINE_STATUSES.filter((from) => canMove(from, 'reconciliation-required'))).toEqual(['in-progress']);
  });
});

describe('booking status from the line counts a booking keeps', () => {
  test('the counts give the status the lines give', () => {
    fc.assert(
      fc.property(anyLines, (lines) => {
        const counts: Record<string, number> = {};
        for (const s of lines) counts[s] = (counts[s] ?? 0) + 1;
        // A status whose count fell back to zero stays in the counts.
        counts['stopping'] ??= 0;
        expect(bookingStatusOfCounts(counts)).toBe(bookingStatusOf(lines));
      }),
    );
  });

  test('counts that cannot be right give no status, so the lines are counted again', () => {
    expect(bookingStatusOfCounts({ queued: -1, 'in-progress': 2 })).toBeNull();
    expect(bookingStatusOfCounts({ 'not-a-status': 1 } as Record<string, number>)).toBeNull();
    expect(bookingStatusOfCounts({ queued: 1.5 })).toBeNull();
  });
});
