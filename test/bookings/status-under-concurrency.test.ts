import { createTestEnv, type TestApi, type TestEnv } from '../support/api';
import { launchPlan, sevenSandboxLines, waitForBooking } from '../support/bookings';
import { bookingStatusOf } from '../../shared/bookings/booking-status';
import type { LineStatus } from '../../shared/bookings/line-state';

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
      const stored = await env.db('bookings').where({ id: booking.id }).first('status');
      expect(stored.status).toBe(done.status);

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
