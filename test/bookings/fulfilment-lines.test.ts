import { randomUUID } from 'node:crypto';
import { Queue } from 'bullmq';
import { until } from '../support/wait';
import { createTestEnv, expectProblem, json, type TestApi, type TestEnv } from '../support/api';
import { launchPlan, lineOf, post, waitForBooking, type BookingBody } from '../support/bookings';
import { assignClient, grantStaff, revokeStaff } from '../../shared/staff/staff-store';
import { queuePrefix, requiredQueues } from '../../shared/queues/names';

const BASE = '/api/v1/internal/fulfilment/bookings';
const EVIDENCE = 'Supplier desk did not answer after the IO was sent.';
const WORKFLOW_QUEUES = ['supplier.manual', 'supplier.computer-use'];

let env: TestEnv;
let api: TestApi;
const t: Record<string, string> = {};
beforeAll(async () => {
  env = await createTestEnv();
  api = await env.api({ RATE_LIMIT_MAX: '100000' });
  // Sandbox suppliers run; workflow jobs wait in their queues, so workflow lines change only when staff act.
  const queues = requiredQueues().filter((q) => !WORKFLOW_QUEUES.includes(q));
  await env.workers({ WORKER_QUEUES: queues.join(','), OUTBOX_RELAY_INTERVAL_MS: '50', SANDBOX_SLOW_MS: '8000' });
  for (const user of ['staff-1', 'staff-2', 'staff-revoked']) {
    await grantStaff(env.staff, user);
    await assignClient(env.staff, user, 'org-a');
  }
  await grantStaff(env.staff, 'staff-other');
  await assignClient(env.staff, 'staff-other', 'org-b');
  await revokeStaff(env.staff, 'staff-revoked');
  const tok = (user: string, extra: Record<string, unknown> = {}) => env.issuer.token({ org: 'staff-org', user, ...extra });
  const customerTok = (org: string, user: string, extra: Record<string, unknown> = {}) =>
    env.issuer.token({ org, user, permissions: ['operator:reconcile'], ...extra });
  Object.assign(t, { staff: await tok('staff-1'), staff2: await tok('staff-2'), other: await tok('staff-other') });
  Object.assign(t, { revoked: await tok('staff-revoked'), staffAgent: await tok('staff-1', { agent: 'bot' }) });
  Object.assign(t, { customer: await customerTok('org-a', 'org-a-buyer'), operator: await customerTok('org-a', 'op-a') });
  t.plainUser = await env.issuer.token({ org: 'org-a', user: 'viewer-a' });
  t.operatorAgent = await customerTok('org-a', 'op-a', { agent: 'bot' });
  t.foreignOperator = await customerTok('org-b', 'op-b');
});
afterAll(() => env.close());

type Line = BookingBody['lines'][number] & { assignedAt: string | null; startedAt: string | null; confirmedAt: string | null };
/** A sandbox-ctv line whose budget picks the supplier's behaviour (…92 unknown, …93 slow), once `settled` holds. */
async function sandbox(budgetMinor: number, settled: (l: Line) => boolean) {
  const { booking, token } = await launchPlan(env, api, [{ channel: 'ctv', adapterKey: 'sandbox-ctv', budgetMinor }]);
  const waited = await waitForBooking(api, token, booking.id, (b) => settled(b.lines[0] as Line));
  return { booking: waited, line: waited.lines[0] as Line };
}
const launch = async () => (await launchPlan(env, api, [{ channel: 'ctv', adapterKey: 'manual', budgetMinor: 10_000 }])).booking;
const op = (token: string, bookingId: string, lineId: string, name: string, body: unknown) =>
  post(api, token, `${BASE}/${bookingId}/lines/${lineId}/${name}`, body);
const answeredLine = async (res: Response, lineId: string) => lineOf<Line>((await json<{ booking: BookingBody }>(res)).booking, lineId);
/** What a refused request must leave alone: every line, the booking row, the event log and the attempts. */
async function state(bookingId: string) {
  const lines = await env.db('booking_lines').where({ booking_id: bookingId }).orderBy('position');
  const booking = await env.db('bookings').where({ id: bookingId }).first('version', 'status');
  const events = await env.db('booking_events').where({ booking_id: bookingId }).orderBy('seq').pluck('id');
  const attempts = await env.db('supplier_attempts').where({ booking_id: bookingId }).orderBy('id');
  return { lines, booking, events, attempts };
}
/** A manual line claimed and started by staff-1: in-progress, with its managed-booking attempt open. */
async function startedLine() {
  const booking = await launch();
  const lineId = booking.lines[0]!.id;
  const claimed = await answeredLine(
    await op(t.staff, booking.id, lineId, 'claim', { expectedVersion: booking.lines[0]!.version }),
    lineId,
  );
  const started = await answeredLine(await op(t.staff, booking.id, lineId, 'start', { expectedVersion: claimed.version }), lineId);
  expect(started.status).toBe('in-progress');
  return { bookingId: booking.id, lineId, version: started.version };
}

describe('the manual workflow', () => {
  test('a staff member claims, starts and confirms a manual line; the booking is confirmed and each step is recorded as that human', async () => {
    const booking = await launch();
    const line = booking.lines[0]!;
    expect(line).toMatchObject({ status: 'queued', executionMethod: 'manual', claimedBy: null, assignedToUserId: null });
    const staffId = (await env.db('staff_members').where({ user_id: 'staff-1' }).first('id')).id as string;

    const claimed = await answeredLine(await op(t.staff, booking.id, line.id, 'claim', { expectedVersion: line.version }), line.id);
    expect(claimed).toMatchObject({ status: 'queued', claimedBy: 'staff-1', assignedToUserId: staffId, version: line.version + 1 });
    expect(claimed.assignedToUserId).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
    expect(claimed.assignedAt).toEqual(expect.any(String));

    const startRes = await op(t.staff, booking.id, line.id, 'start', { expectedVersion: claimed.version });
    const started = await answeredLine(startRes, line.id);
    expect(started).toMatchObject({ status: 'in-progress', version: claimed.version + 1, startedAt: expect.any(String) });
    expect(started.providerAttemptId).toMatch(/^att_/);
    const attempt = await env.db('supplier_attempts').where({ id: started.providerAttemptId }).first();
    expect(attempt).toMatchObject({ line_id: line.id, operation: 'managed-booking', status: 'open' });

    const confirmBody = { expectedVersion: started.version, providerReference: 'IO-2027-0042', evidence: 'Signed IO from the sales desk.' };
    const res = await op(t.staff, booking.id, line.id, 'confirm', confirmBody);
    expect(res.status).toBe(200);
    const { booking: after } = await json<{ booking: BookingBody }>(res);
    expect(after.status).toBe('confirmed');
    expect(after.lines[0]).toMatchObject({
      status: 'confirmed',
      providerReference: 'IO-2027-0042',
      evidence: 'Signed IO from the sales desk.',
      providerAttemptId: started.providerAttemptId,
      confirmedAt: expect.any(String),
    });
    expect((await env.db('supplier_attempts').where({ id: started.providerAttemptId }).first()).status).toBe('confirmed');
    const byStaff = after.events.filter((e) => e.actorId === 'staff-1' && e.lineId === line.id);
    expect(byStaff.map((e) => e.action)).toEqual(['line.claimed', 'line.started', 'line.confirmed']);
    for (const e of byStaff) expect(e).toMatchObject({ actor: 'human', source: 'dev' });
    const statusChanges = after.events.filter((e) => e.action === 'booking.status-changed').map((e) => e.detail?.to);
    expect(statusChanges).toEqual(['in-progress', 'confirmed']);
  });

  test('a staff member rejects a claimed line with evidence; the line and the booking are rejected', async () => {
    const { bookingId, lineId, version } = await startedLine();
    const evidence = 'Inventory sold out for the flight.';
    const { booking } = await json<{ booking: BookingBody }>(
      await op(t.staff, bookingId, lineId, 'reject', { expectedVersion: version, evidence }),
    );
    expect(booking.status).toBe('rejected');
    expect(booking.lines[0]).toMatchObject({ status: 'rejected', evidence });
    expect(booking.events.at(-2)).toMatchObject({ action: 'line.rejected', lineId, actor: 'human', actorId: 'staff-1' });
    // The managed-booking attempt the start opened is closed with the line.
    const attempts = await env.db('supplier_attempts').where({ line_id: lineId }).select('status', 'finished_at');
    expect(attempts).toEqual([{ status: 'rejected', finished_at: expect.any(Date) }]);
  });

  test('a reconciliation-required line resolved as applied is confirmed, and applied needs a providerReference', async () => {
    const { booking, line } = await sandbox(10_092, (l) => l.status === 'reconciliation-required');
    const before = await state(booking.id);
    const applied = { expectedVersion: line.version, outcome: 'applied', evidence: EVIDENCE };
    await expectProblem(await op(t.staff, booking.id, line.id, 'resolve', applied), 400, 'validation_failed');
    expect(await state(booking.id)).toEqual(before);

    const res = await op(t.staff, booking.id, line.id, 'resolve', { ...applied, providerReference: 'SUP-77' });
    const { booking: after } = await json<{ booking: BookingBody }>(res);
    expect(after.status).toBe('confirmed');
    expect(after.lines[0]).toMatchObject({ status: 'confirmed', providerReference: 'SUP-77', version: line.version + 1 });
    expect(after.events.find((e) => e.action === 'line.resolved')).toMatchObject({ lineId: line.id, actor: 'human', actorId: 'staff-1' });
  });

  test('a reconciliation-required line resolved as not-applied is rejected; resolving it again is refused', async () => {
    const { bookingId, lineId, version } = await startedLine();
    await op(t.staff, bookingId, lineId, 'uncertain', { expectedVersion: version, evidence: EVIDENCE });
    // Marking it uncertain closed the attempt it was waiting on, with the line's move.
    const attempts = await env.db('supplier_attempts').where({ line_id: lineId }).select('status', 'detail');
    expect(attempts).toEqual([{ status: 'unknown', detail: { cause: 'marked-uncertain', by: 'staff-1' } }]);
    const notApplied = (v: number) => ({ expectedVersion: v, outcome: 'not-applied', evidence: EVIDENCE });
    const line = await answeredLine(await op(t.staff, bookingId, lineId, 'resolve', notApplied(version + 1)), lineId);
    expect(line).toMatchObject({ status: 'rejected', version: version + 2 });
    const before = await state(bookingId);
    await expectProblem(await op(t.staff, bookingId, lineId, 'resolve', notApplied(version + 2)), 409, 'invalid_transition');
    expect(await state(bookingId)).toEqual(before);
  });
});

describe('uncertain (endpoint 12)', () => {
  test('an in-progress line moves to reconciliation-required and the answer is exactly { booking }', async () => {
    const { bookingId, lineId, version } = await startedLine();
    const evidence = 'x'.repeat(20_000);
    const res = await op(t.staff, bookingId, lineId, 'uncertain', { expectedVersion: version, evidence });
    expect(res.status).toBe(200);
    const body = await json<{ booking: BookingBody }>(res);
    expect(Object.keys(body)).toEqual(['booking']);
    expect(body.booking.status).toBe('in-progress');
    expect(body.booking.lines[0]).toMatchObject({ status: 'reconciliation-required', version: version + 1, evidence });
    expect(body.booking.events.at(-1)).toMatchObject({ action: 'line.marked-uncertain', lineId, actor: 'human', actorId: 'staff-1' });
  });

  describe('a refused request changes nothing', () => {
    let line: { bookingId: string; lineId: string; version: number };
    beforeAll(async () => {
      line = await startedLine();
    });
    test.each([
      ['evidence shorter than 10 characters', { evidence: 'too short' }, 400, 'validation_failed'],
      ['evidence longer than 20000 characters', { evidence: 'x'.repeat(20_001) }, 400, 'validation_failed'],
      ['no expectedVersion', { expectedVersion: undefined }, 400, 'validation_failed'],
      ['no evidence', { evidence: undefined }, 400, 'validation_failed'],
      ['a negative expectedVersion', { expectedVersion: -1 }, 400, 'validation_failed'],
      ['a fractional expectedVersion', { expectedVersion: 1.5 }, 400, 'validation_failed'],
      ['a string expectedVersion', { expectedVersion: '2' }, 400, 'validation_failed'],
      ['an unknown field', { force: true }, 400, 'validation_failed'],
      ['a stale expectedVersion', { expectedVersion: 0 }, 409, 'version_conflict'],
      ['an expectedVersion from the future', { expectedVersion: 99 }, 409, 'version_conflict'],
    ])('when the body has %s, the call is refused and the line is unchanged', async (_name, patch, status, code) => {
      const before = await state(line.bookingId);
      const body = { expectedVersion: line.version, evidence: EVIDENCE, ...patch };
      await expectProblem(await op(t.staff, line.bookingId, line.lineId, 'uncertain', body), status, code);
      expect(await state(line.bookingId)).toEqual(before);
    });
  });

  test('a queued line and a confirmed line cannot be marked uncertain (409 invalid_transition), and nothing changes', async () => {
    const queued = await launch();
    const { booking: confirmed } = await sandbox(10_000, (l) => l.status === 'confirmed');
    for (const b of [queued, confirmed]) {
      const before = await state(b.id);
      const res = await op(t.staff, b.id, b.lines[0]!.id, 'uncertain', { expectedVersion: b.lines[0]!.version, evidence: EVIDENCE });
      await expectProblem(res, 409, 'invalid_transition');
      expect(await state(b.id)).toEqual(before);
    }
  });

  test('a line already in reconciliation-required cannot be marked uncertain again (409), and nothing changes', async () => {
    const { bookingId, lineId, version } = await startedLine();
    expect((await op(t.staff, bookingId, lineId, 'uncertain', { expectedVersion: version, evidence: EVIDENCE })).status).toBe(200);
    const before = await state(bookingId);
    const again = await op(t.staff, bookingId, lineId, 'uncertain', { expectedVersion: version + 1, evidence: 'A second opinion on it.' });
    await expectProblem(again, 409, 'invalid_transition');
    expect(await state(bookingId)).toEqual(before);
  });

  test('ten concurrent calls with the same expectedVersion: exactly one succeeds and one event is recorded', async () => {
    const { bookingId, lineId, version } = await startedLine();
    const results = await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        op(t.staff, bookingId, lineId, 'uncertain', { expectedVersion: version, evidence: `${EVIDENCE} #${i}` }),
      ),
    );
    const statuses = results.map((r) => r.status).sort();
    expect(statuses).toEqual([200, ...Array(9).fill(409)]);
    const codes = await Promise.all(results.filter((r) => r.status === 409).map(async (r) => (await json<{ code: string }>(r)).code));
    expect(new Set(codes)).toEqual(new Set(['version_conflict']));
    const events = await env.db('booking_events').where({ line_id: lineId, action: 'line.marked-uncertain' });
    expect(events).toHaveLength(1);
    const row = await env.db('booking_lines').where({ id: lineId }).first();
    expect(row).toMatchObject({ status: 'reconciliation-required', version: version + 1 });
  });

  test("a sandbox line in flight can be marked uncertain; the supplier's late answer does not move it", async () => {
    const { booking, line } = await sandbox(10_093, (l) => l.status === 'in-progress');
    const res = await op(t.staff, booking.id, line.id, 'uncertain', { expectedVersion: line.version, evidence: EVIDENCE });
    expect((await answeredLine(res, line.id)).status).toBe('reconciliation-required');
    // Marking it uncertain closed the attempt; the supplier's answer, when it comes, is kept on it as evidence.
    const answered = async () => (await env.db('supplier_attempts').where({ id: line.providerAttemptId }).first()).late_outcome !== null;
    await until("the slow supplier's answer", answered);
    const attempt = await env.db('supplier_attempts').where({ id: line.providerAttemptId }).first();
    const row = await env.db('booking_lines').where({ id: line.id }).first();
    expect([attempt.status, attempt.late_outcome.kind, row.status, row.version]).toEqual([
      'unknown',
      'confirmed',
      'reconciliation-required',
      line.version + 1,
    ]);
  });
});

describe('claim rules', () => {
  test('an unclaimed line cannot be started (409 claim_required); once claimed, nobody else may claim, start or confirm it', async () => {
    const booking = await launch();
    const lineId = booking.lines[0]!.id;
    let before = await state(booking.id);
    await expectProblem(await op(t.staff, booking.id, lineId, 'start', { expectedVersion: 0 }), 409, 'claim_required');
    const unclaimedConfirm = { expectedVersion: 0, providerReference: 'IO-1', evidence: EVIDENCE };
    await expectProblem(await op(t.staff, booking.id, lineId, 'confirm', unclaimedConfirm), 409, 'claim_required');
    expect(await state(booking.id)).toEqual(before);
    expect((await op(t.staff, booking.id, lineId, 'claim', { expectedVersion: 0 })).status).toBe(200);
    before = await state(booking.id);
    await expectProblem(await op(t.staff2, booking.id, lineId, 'claim', { expectedVersion: 1 }), 409, 'claimed_by_another');
    await expectProblem(await op(t.staff2, booking.id, lineId, 'start', { expectedVersion: 1 }), 409, 'claim_required');
    const confirm = { expectedVersion: 1, providerReference: 'IO-1', evidence: EVIDENCE };
    await expectProblem(await op(t.staff2, booking.id, lineId, 'confirm', confirm), 409, 'claim_required');
    expect(await state(booking.id)).toEqual(before);
  });

  test('a sandbox line is not a workflow line: claiming it is refused with 409 not_a_workflow_line', async () => {
    const { booking, line } = await sandbox(10_000, (l) => l.status === 'confirmed');
    const before = await state(booking.id);
    const res = await op(t.staff, booking.id, line.id, 'claim', { expectedVersion: line.version });
    await expectProblem(res, 409, 'not_a_workflow_line');
    expect(await state(booking.id)).toEqual(before);
  });

  test('starting a line that is already started is refused with 409 and opens no second attempt', async () => {
    const { bookingId, lineId, version } = await startedLine();
    const before = await state(bookingId);
    await expectProblem(await op(t.staff, bookingId, lineId, 'start', { expectedVersion: version }), 409, 'invalid_transition');
    expect(await state(bookingId)).toEqual(before);
  });
});

describe('who may operate a line', () => {
  let line: { bookingId: string; lineId: string; version: number };
  let otherBooking: BookingBody;
  const bodies = (v: number): Record<string, unknown> => ({
    claim: { expectedVersion: v },
    start: { expectedVersion: v },
    confirm: { expectedVersion: v, providerReference: 'IO-1', evidence: EVIDENCE },
    reject: { expectedVersion: v, evidence: EVIDENCE },
    resolve: { expectedVersion: v, outcome: 'not-applied', evidence: EVIDENCE },
    uncertain: { expectedVersion: v, evidence: EVIDENCE },
  });
  beforeAll(async () => {
    line = await startedLine();
    otherBooking = await launch();
  });

  test.each([
    ["the booking's own customer (even with operator:reconcile)", 'customer'],
    ['a delegated agent acting for a staff member', 'staffAgent'],
    ['a staff member not assigned to the client', 'other'],
    ['a revoked staff member', 'revoked'],
  ])('%s gets 404 problem+json from every operation, and nothing changes', async (_who, key) => {
    const before = await state(line.bookingId);
    for (const [name, body] of Object.entries(bodies(line.version))) {
      await expectProblem(await op(t[key]!, line.bookingId, line.lineId, name, body), 404, 'not_found');
    }
    expect(await state(line.bookingId)).toEqual(before);
  });

  test('unknown, malformed and mismatched booking or line ids get 404 from every operation, and nothing changes', async () => {
    const before = [await state(line.bookingId), await state(otherBooking.id)];
    const pairs = [
      [randomUUID(), line.lineId],
      [line.bookingId, randomUUID()],
      ['not-a-uuid', line.lineId],
      [line.bookingId, 'line-1'],
      [otherBooking.id, line.lineId],
      [line.bookingId, otherBooking.lines[0]!.id],
    ];
    for (const [bookingId, lineId] of pairs) {
      for (const [name, body] of Object.entries(bodies(line.version))) {
        await expectProblem(await op(t.staff, bookingId!, lineId!, name, body), 404, 'not_found');
      }
    }
    expect([await state(line.bookingId), await state(otherBooking.id)]).toEqual(before);
  });
});

describe('operator uncertain (endpoint 14)', () => {
  const path = (b: string, l: string) => `/api/v1/operator/bookings/${b}/lines/${l}/uncertain`;

  test('a human of the advertiser with operator:reconcile moves an in-progress line to reconciliation-required', async () => {
    const { bookingId, lineId, version } = await startedLine();
    const res = await post(api, t.operator, path(bookingId, lineId), { expectedVersion: version, evidence: EVIDENCE });
    expect(res.status).toBe(200);
    const body = await json<{ booking: BookingBody }>(res);
    expect(Object.keys(body)).toEqual(['booking']);
    expect(body.booking.lines[0]).toMatchObject({ status: 'reconciliation-required', version: version + 1, evidence: EVIDENCE });
    expect(body.booking.events.at(-1)).toMatchObject({ action: 'line.marked-uncertain', lineId, actor: 'human', actorId: 'op-a' });
  });

  describe('refusals change nothing', () => {
    let line: { bookingId: string; lineId: string; version: number };
    beforeAll(async () => {
      line = await startedLine();
    });
    test.each([
      ['a human without operator:reconcile', 'plainUser', {}, 403],
      ['a delegated agent, even with operator:reconcile', 'operatorAgent', {}, 403],
      ["another advertiser's operator", 'foreignOperator', {}, 404],
      ['evidence under 10 characters', 'operator', { evidence: 'short' }, 400],
      ['evidence over 20000 characters', 'operator', { evidence: 'y'.repeat(20_001) }, 400],
      ['no expectedVersion', 'operator', { expectedVersion: undefined }, 400],
      ['an unknown field', 'operator', { note: 'hi' }, 400],
      ['a stale expectedVersion', 'operator', { expectedVersion: 1 }, 409],
    ])('%s is refused', async (_name, key, patch, status) => {
      const before = await state(line.bookingId);
      const res = await post(api, t[key]!, path(line.bookingId, line.lineId), {
        expectedVersion: line.version,
        evidence: EVIDENCE,
        ...patch,
      });
      await expectProblem(res, status);
      expect(await state(line.bookingId)).toEqual(before);
    });

    test('unknown or malformed ids get 404 and a queued line gets 409 invalid_transition', async () => {
      const queued = await launch();
      const body = { expectedVersion: 0, evidence: EVIDENCE };
      await expectProblem(await post(api, t.operator, path(randomUUID(), line.lineId), body), 404, 'not_found');
      await expectProblem(await post(api, t.operator, path('nope', 'nope'), body), 404, 'not_found');
      const before = await state(queued.id);
      await expectProblem(await post(api, t.operator, path(queued.id, queued.lines[0]!.id), body), 409, 'invalid_transition');
      expect(await state(queued.id)).toEqual(before);
    });
  });
});

test('a staff-started workflow line keeps its open attempt when its queued job reaches a worker late', async () => {
  const { bookingId, lineId } = await startedLine();
  const before = await env.db('booking_lines').where({ id: lineId }).first();
  await env.workers({ WORKER_QUEUES: 'supplier.manual' });
  const queue = new Queue('supplier.manual', { connection: env.redis, prefix: queuePrefix(env.prefix, 'supplier.manual') });
  const drained = async () => {
    const c = await queue.getJobCounts('waiting', 'active', 'delayed', 'completed');
    return c.waiting + c.active + c.delayed === 0 && c.completed > 0;
  };
  await until('the manual queue to drain', drained).finally(() => queue.close());
  const after = await env.db('booking_lines').where({ id: lineId }).first();
  expect(after.status).toBe('in-progress');
  expect(after.provider_attempt_id).toBe(before.provider_attempt_id);
  expect((await env.db('supplier_attempts').where({ id: before.provider_attempt_id }).first()).status).toBe('open');
  expect((await state(bookingId)).booking.status).toBe('in-progress');
});
