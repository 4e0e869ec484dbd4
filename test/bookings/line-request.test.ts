import { createTestEnv, type TestApi, type TestEnv } from '../support/api';
import { bookingStatusOf, launchPlan, sameCounts } from '../support/bookings';
import { confirmByStatements } from '../support/line-steps';
import type { LineRow } from '../../shared/bookings/booking-store';
import type { LineStatus } from '../../shared/bookings/lines/state';
import { requestOperations } from '../../shared/bookings/lines/request';
import { SYSTEM } from '../../shared/auth/actor';

/**
 * The request stage every operation asked of a booked line shares, for one line or many: each
 * line's move, its operation's record, its job and its event in one statement with the
 * booking's counts and status, or nothing at all when a line is no longer as read.
 */
let env: TestEnv;
let api: TestApi;
beforeAll(async () => {
  // No workers: the jobs stay in the outbox, where the test reads them.
  env = await createTestEnv();
  api = await env.api();
});
afterAll(() => env.close());

/** A sandbox booking of `n` confirmed lines, and its lines as stored. */
async function running(n: number, org: string) {
  const channels = ['ctv', 'audio', 'tv'];
  const { booking } = await launchPlan(
    env,
    api,
    channels.slice(0, n).map((c) => ({ channel: c, adapterKey: `sandbox-${c}`, budgetMinor: 10_000 })),
    org,
  );
  await confirmByStatements(env.db, booking);
  return { bookingId: booking.id, lines: await lines(booking.id) };
}

const lines = async (bookingId: string) => (await env.db('booking_lines').where({ booking_id: bookingId }).orderBy('id')) as LineRow[];

async function stored(bookingId: string) {
  return {
    booking: await env.db('bookings').where({ id: bookingId }).first('status', 'version', 'line_counts'),
    lines: await lines(bookingId),
    operations: await env.db('line_operations').where({ booking_id: bookingId }).orderBy('id'),
    outbox: await env.db('outbox').whereRaw("payload->>'bookingId' = ?", [bookingId]).orderBy('id'),
    events: await env.db('booking_events').where({ booking_id: bookingId }).orderBy('seq').select('action', 'line_id', 'detail'),
  };
}

test('several lines asked in one statement: each line, record, job and event, the booking moved once', async () => {
  const {
    bookingId,
    lines: [a, b, c],
  } = await running(3, 'org-req-1');
  const before = await stored(bookingId);
  const stop = { kind: 'pause' as const, by: 'someone' };

  const asked = await env.db.transaction((trx) =>
    requestOperations(
      trx,
      bookingId,
      [
        { line: c!, kind: 'pause', stop, stopBefore: c!.stop, note: 'why', detail: { note: 'why' } },
        { line: a!, kind: 'change-budget', budgetFromMinor: 10_000, budgetToMinor: 8_000, detail: { budgetToMinor: 8_000 } },
      ],
      SYSTEM,
    ),
  );

  // In the order asked.
  expect(asked.map((r) => [r.line.id, r.line.status, r.line.operation_id])).toEqual([
    [c!.id, 'stop-requested', asked[0]!.operationId],
    [a!.id, 'confirmed', asked[1]!.operationId],
  ]);
  expect(asked[0]!.line).toMatchObject({ operation: 'pause', stop, version: c!.version + 1 });
  expect(asked[1]!.line).toMatchObject({ operation: 'change-budget', stop: null, version: a!.version + 1 });
  const after = await stored(bookingId);
  expect(after.lines.find((l) => l.id === b!.id)).toEqual(b);
  expect(after.booking.version).toBe(before.booking.version + 1);
  expect(after.booking.line_counts).toMatchObject({ confirmed: 2, 'stop-requested': 1 });
  expect(
    sameCounts(
      after.booking.line_counts,
      after.lines.map((l) => l.status),
    ),
  ).toBe(true);
  expect(after.booking.status).toBe(bookingStatusOf(after.lines.map((l) => l.status as LineStatus)));
  const op = (id: string) => after.operations.find((o) => o.id === id);
  expect(op(asked[0]!.operationId)).toMatchObject({
    line_id: c!.id,
    kind: 'pause',
    status: 'requested',
    from_status: 'confirmed',
    note: 'why',
  });
  expect(op(asked[1]!.operationId)).toMatchObject({
    line_id: a!.id,
    kind: 'change-budget',
    from_status: 'confirmed',
    budget_from_minor: '10000',
    budget_to_minor: '8000',
    stop_before: null,
  });
  // Each line's job, in the outbox as the caller is told it.
  const jobs = after.outbox.slice(before.outbox.length).map((o) => o.payload);
  expect(jobs).toEqual(expect.arrayContaining(asked.map((r) => r.message.payload)));
  expect(jobs).toHaveLength(2);
  expect(asked.map((r) => r.message.payload)).toEqual([
    { bookingId, lineId: c!.id, operationId: asked[0]!.operationId },
    { bookingId, lineId: a!.id, operationId: asked[1]!.operationId },
  ]);
  expect(after.events.slice(before.events.length)).toEqual([
    {
      action: 'line.pause-requested',
      line_id: c!.id,
      detail: { from: 'confirmed', to: 'stop-requested', operation: 'pause', operationId: asked[0]!.operationId, note: 'why' },
    },
    {
      action: 'line.budget-change-requested',
      line_id: a!.id,
      detail: { from: 'confirmed', to: 'confirmed', operation: 'change-budget', operationId: asked[1]!.operationId, budgetToMinor: 8_000 },
    },
    { action: 'booking.status-changed', line_id: null, detail: { from: 'confirmed', to: after.booking.status } },
  ]);
});

test('a line no longer at the version read fails the request: 409, nothing written for any line', async () => {
  const {
    bookingId,
    lines: [a, b],
  } = await running(2, 'org-req-2');
  await env
    .db('booking_lines')
    .where({ id: b!.id })
    .update({ version: b!.version + 1 });
  const before = await stored(bookingId);

  const failed = await env.db
    .transaction((trx) =>
      requestOperations(
        trx,
        bookingId,
        [a!, b!].map((line) => ({ line, kind: 'stop' as const, stop: { kind: 'end' as const } })),
        SYSTEM,
      ),
    )
    .catch((err: unknown) => err);

  expect(failed).toMatchObject({ status: 409, code: 'version_conflict' });
  expect(await stored(bookingId)).toEqual(before);
});
