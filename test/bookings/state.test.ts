import fc from 'fast-check';
import { LINE_STATUSES, canMove, isOpen, operationStates, type LineStatus } from '../../shared/bookings/lines/state';
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
  test('a rejected line is final; an ended or paused line moves only to run again, to end, or into doubt over a budget change', () => {
    expect(LINE_STATUSES.filter((to) => canMove('rejected', to))).toEqual([]);
    expect(LINE_STATUSES.filter((to) => canMove('stopped', to))).toEqual(['queued', 'reconciliation-required', 'stop-requested']);
  });

  test('a confirmed line may be paused or stopped, or fall into doubt while its budget changes', () => {
    expect(LINE_STATUSES.filter((to) => canMove('confirmed', to))).toEqual(['reconciliation-required', 'stop-requested']);
  });

  test('reconciliation-required is settled as the operation in doubt was or was not applied, or stopped whatever was booked', () => {
    expect(LINE_STATUSES.filter((to) => canMove('reconciliation-required', to))).toEqual([
      'confirmed',
      'rejected',
      'stop-requested',
      'stopped',
    ]);
  });

  test('a line falls into doubt only while an operation is with its supplier', () => {
    expect(LINE_STATUSES.filter((from) => canMove(from, 'reconciliation-required'))).toEqual([
      'in-progress',
      'confirmed',
      'stopping',
      'stopped',
    ]);
  });

  test('a pause or stop waits as stop-requested, runs as stopping and ends stopped; a refusal returns the line to where it was', () => {
    for (const op of ['pause', 'stop'] as const) {
      expect(operationStates(op, 'confirmed')).toEqual({
        requested: 'stop-requested',
        inFlight: 'stopping',
        applied: 'stopped',
        refused: 'confirmed',
      });
    }
    expect(operationStates('stop', 'stopped').refused).toBe('stopped');
  });

  test('a resume waits queued and runs in progress; a budget change keeps the line where it is', () => {
    expect(operationStates('resume', 'stopped')).toEqual({
      requested: 'queued',
      inFlight: 'in-progress',
      applied: 'confirmed',
      refused: 'stopped',
    });
    expect(operationStates('change-budget', 'confirmed')).toEqual({
      requested: 'confirmed',
      inFlight: 'confirmed',
      applied: 'confirmed',
      refused: 'confirmed',
    });
    expect(operationStates('change-budget', 'stopped').applied).toBe('stopped');
  });

  test('every move an operation makes is an edge of the table', () => {
    for (const op of ['book', 'pause', 'stop', 'resume', 'change-budget'] as const) {
      for (const from of ['confirmed', 'stopped'] as const) {
        const s = operationStates(op, from);
        const moves: Array<[LineStatus, LineStatus]> = [
          [s.requested, s.inFlight],
          [s.inFlight, s.applied],
          [s.inFlight, s.refused],
          [s.inFlight, 'reconciliation-required'],
          ['reconciliation-required', s.applied],
          ['reconciliation-required', s.refused],
        ];
        for (const [a, b] of moves) if (a !== b) expect([op, from, a, b, canMove(a, b)]).toEqual([op, from, a, b, true]);
      }
    }
  });
});
