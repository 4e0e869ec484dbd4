import fc from 'fast-check';
import { LINE_STATUSES, canMove, isOpen, type LineStatus } from '../../shared/bookings/line-state';
import { createTestDatabase, type TestDatabase } from '../support/database';
import { bookingStatusOf } from '../support/bookings';

const anyLines = fc.array(fc.constantFrom(...LINE_STATUSES), { minLength: 1, maxLength: 12 });

let database: TestDatabase;
beforeAll(async () => {
  database = await createTestDatabase();
});
afterAll(() => database.drop());

const countsOf = (lines: readonly string[]) => {
  const counts: Record<string, number> = {};
  for (const s of lines) counts[s] = (counts[s] ?? 0) + 1;
  return counts;
};

/** The database's booking status for each set of counts, in one round trip. */
async function statusesOf(counts: readonly unknown[]): Promise<Array<string | null>> {
  const { rows } = await database.db.raw<{ rows: Array<{ status: string | null }> }>(
    'select booking_status_of(c) as status from jsonb_array_elements(?::jsonb) with ordinality as t(c, i) order by i',
    [JSON.stringify(counts)],
  );
  return rows.map((r) => r.status);
}

/** Many random line sets, each with the status the database gives their counts. */
async function sampled(n = 500): Promise<Array<{ lines: LineStatus[]; status: string | null }>> {
  const sets = fc.sample(anyLines, { numRuns: n, seed: 20261123 });
  const statuses = await statusesOf(sets.map(countsOf));
  return sets.map((lines, k) => ({ lines, status: statuses[k]! }));
}

describe('booking status from the line counts a booking keeps (booking_status_of)', () => {
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
    [['queued', 'confirmed'], 'in-progress'],
  ])('%j → %s', async (lines, status) => {
    expect(await statusesOf([countsOf(lines)])).toEqual([status]);
  });

  test('gives the status the spec gives the lines, whatever the mix', async () => {
    for (const { lines, status } of await sampled()) expect([lines, status]).toEqual([lines, bookingStatusOf(lines)]);
  });

  test('any open line other than a stop keeps the booking in progress (or queued before anything moved)', async () => {
    for (const { lines, status } of await sampled()) {
      const workOpen = lines.some((s) => isOpen(s) && s !== 'stop-requested' && s !== 'stopping');
      if (workOpen) expect(['queued', 'in-progress']).toContain(status);
      else expect(['queued', 'in-progress']).not.toContain(status);
    }
  });

  test('a booking is confirmed exactly when every line is, and rejected exactly when every line is', async () => {
    for (const { lines, status } of await sampled()) {
      expect(status === 'confirmed').toBe(lines.every((s) => s === 'confirmed'));
      expect(status === 'rejected').toBe(lines.every((s) => s === 'rejected'));
    }
  });

  test('a status whose count fell back to zero changes nothing; no lines at all is queued', async () => {
    expect(await statusesOf([{ confirmed: 2, stopping: 0, queued: 0 }, {}, { queued: 0 }])).toEqual(['confirmed', 'queued', 'queued']);
  });

  test('counts that cannot be right give no status, so the lines are counted again', async () => {
    expect(await statusesOf([{ queued: -1, 'in-progress': 2 }, { 'not-a-status': 1 }, { queued: 1.5 }, { queued: '1' }])).toEqual([
      null,
      null,
      null,
      null,
    ]);
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
