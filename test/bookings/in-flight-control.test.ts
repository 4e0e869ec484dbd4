import { createTestEnv, expectProblem, json, type TestApi, type TestEnv } from '../support/api';
import { approve, bookingFootprint, launchPlan, post, readBooking, waitForBooking, type BookingBody } from '../support/bookings';
import type { RunningWorkers } from '../../workers/main';
import { assignClient, grantStaff } from '../../shared/staff/staff-store';

let env: TestEnv;
let api: TestApi;
let workers: RunningWorkers;
beforeAll(async () => {
  env = await createTestEnv();
  api = await env.api();
  workers = await env.workers({ SANDBOX_SLOW_MS: '1500' });
});
afterAll(() => env.close());

type Line = BookingBody['lines'][number] & { stop: { kind: string; by?: string; note?: string } | null; pendingOperation: string | null };
const lines = (b: BookingBody) => b.lines as Line[];

/** A sandbox booking whose lines are all confirmed. */
async function running(budgets: number[], org = 'org-a') {
  const channels = ['ctv', 'audio', 'tv', 'cinema', 'dooh', 'search', 'social'];
  const launched = await launchPlan(
    env,
    api,
    budgets.map((budgetMinor, i) => ({ channel: channels[i]!, adapterKey: `sandbox-${channels[i]}`, budgetMinor })),
    org,
  );
  const booking = await waitForBooking(api, launched.token, launched.booking.id, (b) => b.lines.every((l) => l.status === 'confirmed'));
  return { ...launched, booking };
}

const control = (token: string, campaignId: string, what: string, body?: unknown) =>
  post(api, token, `/api/v1/campaigns/${campaignId}/${what}`, body);
const lineControl = (token: string, bookingId: string, lineId: string, what: string, body: unknown) =>
  post(api, token, `/api/v1/bookings/${bookingId}/lines/${lineId}/${what}`, body);
const receipts = (lineId: string, operation?: string) =>
  env
    .db('sandbox_ledger')
    .where({ line_id: lineId })
    .modify((q) => (operation ? q.where({ operation }) : q));

/** The campaign's plan replaced by one cheaper ctv line: a new snapshot to approve. */
async function replan(token: string, campaignId: string, planId: string) {
  const current = await json<{ plan: { version: number } }>(await api.fetch(`/api/v1/plans/${planId}`, { token }));
  const lines = [{ channel: 'ctv', adapterKey: 'sandbox-ctv', budgetMinor: 9_000 }];
  const res = await post(api, token, `/api/v1/campaigns/${campaignId}/plan`, { lines, expectedVersion: current.plan.version }, 'PUT');
  expect(res.status).toBe(200);
  return (await json<{ plan: { version: number } }>(res)).plan;
}

describe('pause, resume and stop a running campaign', () => {
  test('a pause stops every running line through its supplier; a resume runs them again; each is sent once with its attempt id', async () => {
    const { booking, campaignId, token } = await running([10_000, 12_000, 14_000]);
    const paused = await control(token, campaignId, 'pause', { note: 'Brand-safety review of the publisher list' });
    expect(paused.status).toBe(202);
    const asked = await json<{ booking: BookingBody; requested: string[]; skipped: unknown[] }>(paused);
    expect(asked.requested.sort()).toEqual(booking.lines.map((l) => l.id).sort());
    expect(asked.skipped).toEqual([]);
    // Answered with what was asked, before any supplier acted: every line waits for its supplier.
    for (const l of lines(asked.booking)) {
      expect(l).toMatchObject({
        status: 'stop-requested',
        pendingOperation: 'pause',
        stop: { kind: 'pause', note: 'Brand-safety review of the publisher list' },
      });
    }
    const stopped = await waitForBooking(api, token, booking.id, (b) => b.lines.every((l) => l.status === 'stopped'));
    expect(stopped.status).toBe('stopped');
    for (const l of lines(stopped)) {
      expect(l).toMatchObject({ stop: { kind: 'pause' }, pendingOperation: null });
      const sent = await receipts(l.id, 'pause');
      expect(sent).toHaveLength(1);
      const attempt = await env.db('supplier_attempts').where({ line_id: l.id, operation: 'pause' }).first();
      expect(sent[0].idempotency_key).toBe(attempt.id);
      expect(attempt.status).toBe('applied');
    }
    const actions = stopped.events.filter((e) => e.lineId === booking.lines[0]!.id).map((e) => e.action);
    expect(actions).toEqual(expect.arrayContaining(['line.pause-requested', 'line.pause-started', 'line.paused']));

    expect((await control(token, campaignId, 'resume')).status).toBe(202);
    const resumed = await waitForBooking(api, token, booking.id, (b) => b.lines.every((l) => l.status === 'confirmed'));
    expect(resumed.status).toBe('confirmed');
    for (const l of lines(resumed)) {
      expect(l).toMatchObject({ stop: null, pendingOperation: null });
      expect(await receipts(l.id, 'resume')).toHaveLength(1);
      // Resuming never books again.
      expect(await receipts(l.id, 'book')).toHaveLength(1);
    }
  });

  test('a stop ends the lines for good: they cannot resume, and the campaign may be launched anew', async () => {
    const { booking, campaignId, planId, token } = await running([10_000, 10_100]);
    const res = await control(token, campaignId, 'stop');
    expect(res.status).toBe(202);
    const stopped = await waitForBooking(api, token, booking.id, (b) => b.lines.every((l) => l.status === 'stopped'));
    for (const l of lines(stopped)) expect(l.stop).toMatchObject({ kind: 'end' });
    const again = await expectProblem(await control(token, campaignId, 'resume'), 409, 'not_booked');
    expect(again.detail).toMatch(/no open booking/);
    const one = lines(stopped)[0]!;
    const refused = await expectProblem(
      await lineControl(token, booking.id, one.id, 'resume', { expectedVersion: one.version }),
      409,
      'invalid_transition',
    );
    expect(refused.detail).toMatch(/ended.*Allowed now: none/);
    // The ended booking no longer holds the campaign: a changed plan launches as a new booking.
    const plan = await replan(token, campaignId, planId);
    await approve(api, token, campaignId, plan.version);
    const relaunched = await post(api, token, `/api/v1/campaigns/${campaignId}/launch`);
    expect(relaunched.status).toBe(202);
    expect((await json<{ booking: { id: string } }>(relaunched)).booking.id).not.toBe(booking.id);
  });

  test('a paused booking still holds its campaign: its plan cannot be replaced (amend it instead), nor approved again beside it', async () => {
    const { booking, campaignId, planId, token } = await running([10_000]);
    expect((await control(token, campaignId, 'pause')).status).toBe(202);
    await waitForBooking(api, token, booking.id, (b) => b.status === 'stopped');
    const current = await json<{ plan: { version: number } }>(await api.fetch(`/api/v1/plans/${planId}`, { token }));
    const lines = [{ channel: 'ctv', adapterKey: 'sandbox-ctv', budgetMinor: 9_000 }];
    const refused = await expectProblem(
      await post(api, token, `/api/v1/campaigns/${campaignId}/plan`, { lines, expectedVersion: current.plan.version }, 'PUT'),
      409,
      'plan_locked_in_flight',
    );
    expect(refused.detail).toMatch(/amend/);
    await expectProblem(
      await post(api, token, `/api/v1/campaigns/${campaignId}/plan/approve`, { expectedVersion: current.plan.version }),
      409,
    );
  });

  test('stopping a campaign twice, or twenty times at once, asks each supplier once', async () => {
    const { booking, campaignId, token } = await running([10_000, 10_200, 10_400]);
    const answers = await Promise.all(Array.from({ length: 20 }, () => control(token, campaignId, 'stop')));
    expect(answers.map((r) => r.status)).toEqual(Array(20).fill(202));
    const bodies = await Promise.all(answers.map((r) => json<{ requested: string[] }>(r)));
    expect(bodies.flatMap((b) => b.requested).sort()).toEqual(booking.lines.map((l) => l.id).sort());
    await waitForBooking(api, token, booking.id, (b) => b.lines.every((l) => l.status === 'stopped'));
    for (const l of booking.lines) {
      expect(await env.db('line_operations').where({ line_id: l.id })).toHaveLength(1);
      expect(await receipts(l.id, 'stop')).toHaveLength(1);
    }
  });

  test('a line that is not running is reported, not paused; a campaign with nothing to pause is refused and unchanged', async () => {
    const { booking, campaignId, token } = await running([10_000, 10_300]);
    const [first, second] = booking.lines;
    expect((await lineControl(token, booking.id, first!.id, 'pause', { expectedVersion: first!.version })).status).toBe(202);
    await waitForBooking(api, token, booking.id, (b) => b.lines[0]!.status === 'stopped');
    const res = await control(token, campaignId, 'pause');
    expect(res.status).toBe(202);
    const body = await json<{ requested: string[]; skipped: Array<{ lineId: string; status: string; reason: string }> }>(res);
    expect(body.requested).toEqual([second!.id]);
    expect(body.skipped).toEqual([{ lineId: first!.id, status: 'stopped', reason: 'The line is already stopped.' }]);
    await waitForBooking(api, token, booking.id, (b) => b.lines.every((l) => l.status === 'stopped'));
    // Both paused already: asking again is answered, and changes nothing.
    const before = await bookingFootprint(env.db, booking.id);
    expect((await control(token, campaignId, 'pause')).status).toBe(202);
    expect(await bookingFootprint(env.db, booking.id)).toEqual(before);
  });

  test('a move the line cannot take is 409 naming the moves it can; a stale version is 409; neither changes anything', async () => {
    const { booking, token } = await running([10_000]);
    const line = booking.lines[0]!;
    const before = await bookingFootprint(env.db, booking.id);
    const refused = await expectProblem(
      await lineControl(token, booking.id, line.id, 'resume', { expectedVersion: line.version }),
      409,
      'invalid_transition',
    );
    expect(refused.detail).toMatch(/Allowed now: pause, stop\./);
    await expectProblem(
      await lineControl(token, booking.id, line.id, 'pause', { expectedVersion: line.version - 1 }),
      409,
      'version_conflict',
    );
    expect(await bookingFootprint(env.db, booking.id)).toEqual(before);
  });

  test('bad bodies are 400 and change nothing; other tenants get 404; delegated agents cannot act on one line', async () => {
    const { booking, campaignId, token } = await running([10_000]);
    const line = booking.lines[0]!;
    const before = await bookingFootprint(env.db, booking.id);
    await expectProblem(
      await lineControl(token, booking.id, line.id, 'pause', { expectedVersion: line.version, extra: 1 }),
      400,
      'validation_failed',
    );
    await expectProblem(await lineControl(token, booking.id, line.id, 'pause', {}), 400, 'validation_failed');
    await expectProblem(
      await lineControl(token, booking.id, line.id, 'pause', { expectedVersion: line.version, note: 'x'.repeat(2001) }),
      400,
    );
    await expectProblem(await control(token, campaignId, 'pause', { note: '' }), 400);
    await expectProblem(await control(token, campaignId, 'stop', { reason: 'not a field' }), 400);
    const other = await env.issuer.token({ org: 'org-b', user: 'org-b-buyer' });
    const unknownId = '00000000-0000-4000-8000-000000000000';
    const foreign = await control(other, campaignId, 'stop');
    const missing = await control(other, unknownId, 'stop');
    await expectProblem(foreign, 404, 'not_found');
    await expectProblem(missing, 404, 'not_found');
    await expectProblem(await lineControl(other, booking.id, line.id, 'stop', { expectedVersion: line.version }), 404);
    await expectProblem(await lineControl(token, booking.id, unknownId, 'stop', { expectedVersion: line.version }), 409);
    const agent = await env.issuer.token({ org: 'org-a', user: 'org-a-buyer', agent: 'assistant' });
    await expectProblem(await lineControl(agent, booking.id, line.id, 'pause', { expectedVersion: line.version }), 403);
    // The campaign-level action is governed: an agent needs an approved step.
    await expectProblem(await control(agent, campaignId, 'pause'), 403);
    expect(await bookingFootprint(env.db, booking.id)).toEqual(before);
  });

  test('a campaign with no booking is refused with 409 and nothing is written', async () => {
    const token = await env.issuer.token({ org: 'org-a', user: 'org-a-buyer' });
    const created = await post(api, token, '/api/v1/campaigns', {
      name: 'Unlaunched',
      clientName: 'Acme',
      startDate: '2099-03-01',
      endDate: '2099-03-31',
      budgetMinor: 1000,
      maximumCommitmentMinor: 1000,
      channels: ['ctv'],
    });
    const { campaign } = await json<{ campaign: { id: string } }>(created);
    const operations = async () => Number((await env.db('line_operations').count('* as n'))[0]!.n);
    const before = await operations();
    await expectProblem(await control(token, campaign.id, 'pause'), 409, 'not_booked');
    await expectProblem(
      await post(api, token, `/api/v1/campaigns/${campaign.id}/amendments`, { expectedVersion: 0, endDate: '2099-04-30' }),
      400,
    );
    expect(await operations()).toBe(before);
  });
});

describe('what the supplier says', () => {
  test('…81 refuses: the line keeps running with the reason as evidence; the operation is recorded as refused', async () => {
    const { booking, token } = await running([10_081]);
    const line = booking.lines[0]!;
    expect((await lineControl(token, booking.id, line.id, 'pause', { expectedVersion: line.version })).status).toBe(202);
    const after = await waitForBooking(api, token, booking.id, (b) => b.events.some((e) => e.action === 'line.pause-refused'));
    expect(lines(after)[0]).toMatchObject({
      status: 'confirmed',
      stop: null,
      pendingOperation: null,
      evidence: expect.stringMatching(/refused the pause/),
    });
    expect(await env.db('line_operations').where({ line_id: line.id }).first('status', 'reason')).toMatchObject({
      status: 'refused',
      reason: expect.stringMatching(/refused/),
    });
    expect(after.status).toBe('confirmed');
  });

  test('…82 loses the answer: the line goes to reconciliation with the pause named, and a resolution settles it either way', async () => {
    const { booking, token } = await running([10_082, 10_082]);
    await grantStaff(env.staff, 'staff-ifc');
    await assignClient(env.staff, 'staff-ifc', 'org-a');
    const staff = await env.issuer.token({ org: 'staff-org', user: 'staff-ifc' });
    for (const l of booking.lines)
      expect((await lineControl(token, booking.id, l.id, 'pause', { expectedVersion: l.version })).status).toBe(202);
    const doubt = await waitForBooking(api, token, booking.id, (b) => b.lines.every((l) => l.status === 'reconciliation-required'));
    for (const l of lines(doubt)) expect(l).toMatchObject({ pendingOperation: 'pause', stop: { kind: 'pause' } });
    expect(doubt.events.find((e) => e.action === 'line.reconciliation-required')?.detail).toMatchObject({ operation: 'pause' });
    const [a] = lines(doubt);
    const resolve = (l: Line, outcome: string) =>
      post(api, staff, `/api/v1/internal/fulfilment/bookings/${booking.id}/lines/${l.id}/resolve`, {
        expectedVersion: l.version,
        outcome,
        evidence: 'The supplier dashboard shows the line paused since 21:04.',
      });
    expect((await resolve(a!, 'applied')).status).toBe(200);
    const current = await readBooking(api, token, booking.id);
    expect((await resolve(lines(current)[1]!, 'not-applied')).status).toBe(200);
    const settled = lines(await readBooking(api, token, booking.id));
    expect(settled[0]).toMatchObject({ status: 'stopped', stop: { kind: 'pause' }, pendingOperation: null });
    expect(settled[1]).toMatchObject({ status: 'confirmed', stop: null, pendingOperation: null });
    // Nothing was sent again.
    for (const l of booking.lines) expect(await receipts(l.id, 'pause')).toHaveLength(1);
  });

  test('a stop of a line nobody has sent yet ends it at once, and its booking job then does nothing', async () => {
    const token = await env.issuer.token({ org: 'org-q', user: 'org-q-buyer' });
    await workers.close();
    try {
      const launched = await launchPlan(env, api, [{ channel: 'ctv', adapterKey: 'sandbox-ctv', budgetMinor: 5_000 }], 'org-q');
      const res = await control(token, launched.campaignId, 'stop');
      expect(res.status).toBe(202);
      const body = await json<{ booking: BookingBody }>(res);
      expect(lines(body.booking)[0]).toMatchObject({ status: 'stopped', stop: { kind: 'end' } });
      // Kept as a stop applied at once, under the id its events name.
      const lineId = launched.booking.lines[0]!.id;
      const events = await env.db('booking_events').where({ line_id: lineId }).whereIn('action', ['line.stop-requested', 'line.stopped']);
      expect(events.map((e) => e.action).sort()).toEqual(['line.stop-requested', 'line.stopped']);
      const operationIds = new Set(events.map((e) => e.detail.operationId));
      expect(operationIds.size).toBe(1);
      expect(await env.db('line_operations').where({ line_id: lineId })).toEqual([
        expect.objectContaining({
          id: [...operationIds][0],
          kind: 'stop',
          status: 'applied',
          from_status: 'queued',
          attempt_id: null,
          reason: 'The line was never sent to its supplier; nothing was booked.',
          requested_by: 'org-q-buyer',
          settled_at: expect.any(Date),
        }),
      ]);
      workers = await env.workers();
      await workers.relayNow();
      await new Promise((r) => setTimeout(r, 1500));
      expect(await receipts(launched.booking.lines[0]!.id)).toHaveLength(0);
      expect((await readBooking(api, token, launched.booking.id)).lines[0]!.status).toBe('stopped');
    } finally {
      if (!workers) workers = await env.workers();
    }
  });

  test('a stop of a workflow line staff are still booking takes it over: their booking attempt is closed as superseded by it', async () => {
    const { booking, token } = await launchPlan(env, api, [{ channel: 'ctv', adapterKey: 'manual', budgetMinor: 5_000 }], 'org-w');
    const lineId = booking.lines[0]!.id;
    await waitForBooking(api, token, booking.id, (b) => b.lines[0]!.workflowSteps != null);
    await grantStaff(env.staff, 'staff-ifw');
    await assignClient(env.staff, 'staff-ifw', 'org-w');
    const staff = await env.issuer.token({ org: 'staff-org', user: 'staff-ifw' });
    const desk = `/api/v1/internal/fulfilment/bookings/${booking.id}/lines/${lineId}`;
    for (const step of ['claim', 'start']) {
      const { version } = (await readBooking(api, token, booking.id)).lines[0]!;
      expect((await post(api, staff, `${desk}/${step}`, { expectedVersion: version })).status).toBe(200);
    }
    const handed = await readBooking(api, token, booking.id);
    expect(handed.lines[0]).toMatchObject({ status: 'in-progress' });
    const res = await lineControl(token, booking.id, lineId, 'stop', { expectedVersion: handed.lines[0]!.version });
    expect(res.status).toBe(202);
    const stop = await env.db('line_operations').where({ line_id: lineId, kind: 'stop' }).first('id', 'status', 'from_status');
    expect(stop).toMatchObject({ status: 'requested', from_status: 'in-progress' });
    expect(await env.db('supplier_attempts').where({ line_id: lineId }).select('operation', 'status', 'detail')).toEqual([
      { operation: 'managed-booking', status: 'superseded', detail: { by: 'stop', operationId: stop.id } },
    ]);
    expect(lines(await readBooking(api, token, booking.id))[0]).toMatchObject({ status: 'stop-requested', pendingOperation: 'stop' });
  });
});
