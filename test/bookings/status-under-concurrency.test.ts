import { createTestEnv, type TestApi, type TestEnv } from '../support/api';
import { bookingStatusOf, launchPlan, sameCounts, sevenSandboxLines, waitForBooking } from '../support/bookings';
import type { LineStatus } from '../../shared/bookings/lines/state';
import { changeLine } from '../../shared/bookings/lines/store';
import { SYSTEM } from '../../shared/auth/actor';

let env: TestEnv;
let api: TestApi;
beforeAll(async () => {
  env = await createTestEnv();
  api = await env.api();
});
afterAll(() => env.close());

const REJECTED = 91;
const settled = (b: { lines: Array<{ status: string }> }) => b.lines.every((l) => l.status === 'confirmed' || l.status === 'rejected');

describe('booking status while many lines finish at once', () => {
  test('each booking status agrees with its lines, and its status events form one unbroken chain', async () => {
    // Lines are queued before any worker runs, so every line of every booking is taken up at once.
    const launched = await Promise.all(
      Array.from({ length: 6 }, (_, i) =>
        launchPlan(
          env,
          api,
          sevenSandboxLines().map((line, j) => ({
            ...line,
            // Booking 0 confirms everything, booking 1 rejects everything, the rest mix both.
            budgetMinor: line.budgetMinor + (i === 1 || (i > 1 && (i + j) % 3 === 0) ? REJECTED : 0),
          })),
          `org-status-${i}`,
        ),
      ),
    );
    await env.workers({ ADAPTER_CONCURRENCY: '20' });

    const expected = ['confirmed', 'rejected', 'partially-confirmed', 'partially-confirmed', 'partially-confirmed', 'partially-confirmed'];
    for (const [i, { booking, token }] of launched.entries()) {
      const done = await waitForBooking(api, token, booking.id, settled);
      expect(done.status).toBe(bookingStatusOf(done.lines.map((l) => l.status as LineStatus)));
      expect(done.status).toBe(expected[i]);
      const stored = await env.db('bookings').where({ id: booking.id }).first('status', 'line_counts');
      expect(stored.status).toBe(done.status);
      expect(
        sameCounts(
          stored.line_counts,
          done.lines.map((l) => l.status as LineStatus),
        ),
      ).toBe(true);

      const changes = (await env
        .db('booking_events')
        .where({ booking_id: booking.id, action: 'booking.status-changed' })
        .orderBy('created_at')
        .pluck('detail')) as Array<{ from: string; to: string }>;
      // Ordered by time a chain may tie, so walk it from 'queued' by each change's `from`.
      let at = 'queued';
      const remaining = [...changes];
      while (remaining.length) {
        const next = remaining.findIndex((c) => c.from === at);
        expect(next).toBeGreaterThanOrEqual(0);
        at = remaining.splice(next, 1)[0]!.to;
      }
      expect(at).toBe(done.status);
    }
  });
});

describe('a line change waiting on another line change of the same booking', () => {
  // No workers here: the test moves the lines itself, in the order it needs.
  let quiet: TestEnv;
  let quietApi: TestApi;
  beforeAll(async () => {
    quiet = await createTestEnv();
    quietApi = await quiet.api();
  });
  afterAll(() => quiet.close());

  /** Resolves once some transaction of this database waits on a row lock. */
  async function someoneWaitsOnALock(): Promise<void> {
    const deadline = Date.now() + 10_000;
    for (;;) {
      const { rows } = await quiet.db.raw(
        `select count(*)::int as n from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock'`,
      );
      if (rows[0].n > 0) return;
      if (Date.now() > deadline) throw new Error('no transaction ever waited on the booking lock');
      await new Promise((r) => setTimeout(r, 20));
    }
  }

  test('the later change counts the earlier one, committed while it waited, in the booking status', async () => {
    const { booking } = await launchPlan(quiet, quietApi, sevenSandboxLines().slice(0, 2), 'org-status-race');
    const [a, b] = (await quiet.db('booking_lines').where({ booking_id: booking.id }).orderBy('id').pluck('id')) as string[];
    const move = (lineId: string, to: LineStatus) => ({ bookingId: booking.id, lineId: lineId, to, actor: SYSTEM, action: `test.${to}` });
    for (const id of [a!, b!]) await quiet.db.transaction((trx) => changeLine(trx, move(id, 'in-progress')));

    // A confirms and holds its transaction open; B's rejection then waits for the booking row.
    const first = await quiet.db.transaction();
    await changeLine(first, move(a!, 'confirmed'));
    const second = quiet.db.transaction((trx) => changeLine(trx, move(b!, 'rejected')));
    await someoneWaitsOnALock();
    await first.commit();
    await second;

    // Seen from A's transaction, B was still in progress; B's must see A confirmed, or the booking stays in-progress forever.
    const stored = await quiet.db('bookings').where({ id: booking.id }).first('status');
    expect(stored.status).toBe('partially-confirmed');
    const changes = (await quiet
      .db('booking_events')
      .where({ booking_id: booking.id, action: 'booking.status-changed' })
      .orderBy('created_at')
      .pluck('detail')) as Array<{ from: string; to: string }>;
    expect(changes.map((c) => `${c.from}->${c.to}`)).toEqual(['queued->in-progress', 'in-progress->partially-confirmed']);
  });

  test('counts that cannot be right are counted again from the lines, and the status follows the lines', async () => {
    const { booking } = await launchPlan(quiet, quietApi, sevenSandboxLines().slice(0, 3), 'org-status-recount');
    const ids = (await quiet.db('booking_lines').where({ booking_id: booking.id }).orderBy('id').pluck('id')) as string[];
    const move = (lineId: string, to: LineStatus) => ({ bookingId: booking.id, lineId, to, actor: SYSTEM, action: `test.${to}` });
    // Counts left behind by a write that bypassed line changes: one line short of queued.
    await quiet
      .db('bookings')
      .where({ id: booking.id })
      .update({ line_counts: JSON.stringify({ queued: 0 }) });
    for (const id of ids) await quiet.db.transaction((trx) => changeLine(trx, move(id, 'in-progress')));
    for (const id of ids) await quiet.db.transaction((trx) => changeLine(trx, move(id, 'confirmed')));

    const stored = await quiet.db('bookings').where({ id: booking.id }).first('status', 'line_counts');
    expect(stored.status).toBe('confirmed');
    expect(sameCounts(stored.line_counts, ['confirmed', 'confirmed', 'confirmed'])).toBe(true);
  });
});
