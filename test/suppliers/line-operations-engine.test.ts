import { createTestEnv, json, type TestApi, type TestEnv } from '../support/api';
import { launchPlan, lineOf, post, readBooking, sameCounts, type BookingBody } from '../support/bookings';
import { makeCreative } from '../support/creatives';
import { runMaintenanceJob } from '../support/maintenance';
import { until } from '../support/wait';
import { Queue } from 'bullmq';
import { queuePrefix } from '../../shared/queues/names';
import { executeLineJob } from '../../shared/bookings/lines/flow';
import type { BookingOutcome, LineOperationOutcome } from '../../shared/adapters/adapter';
import { assignClient, grantStaff } from '../../shared/staff/staff-store';
import { engineOptions, heldAdapter, heldSupplier, jitter } from './support';

let env: TestEnv;
let api: TestApi;
let operator: string;
let staff: string;
let buyer: string;
beforeAll(async () => {
  env = await createTestEnv();
  // No workers unless a test starts them: supplier calls are driven by hand, so their timing is the test's.
  api = await env.api();
  operator = await env.issuer.token({ org: 'org-a', user: 'op-a', permissions: ['operator:reconcile'] });
  await grantStaff(env.staff, 'staff-1');
  await assignClient(env.staff, 'staff-1', 'org-a');
  staff = await env.issuer.token({ org: 'staff-org', user: 'staff-1' });
  buyer = await env.issuer.token({ org: 'org-a', user: 'org-a-buyer' });
});
afterAll(() => env.close());

type Line = BookingBody['lines'][number] & {
  pendingOperation: string | null;
  stop: { kind: string } | null;
  attempts: Array<{ id: string; operation: string; status: string; lateOutcome: unknown }>;
};

/** A booked sandbox line, confirmed by a supplier call driven by hand. */
async function confirmedLine(budgetMinor = 10_000) {
  const { booking } = await launchPlan(env, api, [{ channel: 'ctv', adapterKey: 'sandbox-ctv', budgetMinor }]);
  const lineId = booking.lines[0]!.id;
  const held = heldSupplier<BookingOutcome>();
  const run = executeLineJob(env.db, heldAdapter(held), { bookingId: booking.id, lineId }, engineOptions(env));
  await held.received;
  held.answer({ kind: 'confirmed', providerReference: 'sup-1' });
  expect(await run).toBe('confirmed');
  return { bookingId: booking.id, lineId };
}

/** Asks for a pause over REST and returns the operation's job as the queue would carry it. */
async function pauseRequested(bookingId: string, lineId: string) {
  const line = lineOf<Line>(await readBooking(api, buyer, bookingId), lineId);
  expect((await post(api, buyer, `/api/v1/bookings/${bookingId}/lines/${lineId}/pause`, { expectedVersion: line.version })).status).toBe(
    202,
  );
  const op = await env.db('line_operations').where({ line_id: lineId, status: 'requested' }).first('id');
  return { bookingId, lineId, operationId: op.id as string };
}

/** The operation's supplier call, started by hand; resolves once the supplier has it. */
async function opInFlight(job: { bookingId: string; lineId: string; operationId: string }) {
  const held = heldSupplier<LineOperationOutcome>();
  const run = executeLineJob(env.db, heldAdapter(heldSupplier<BookingOutcome>(), 'sandbox-ctv', held), job, engineOptions(env));
  await held.received;
  return { held, run };
}

describe('operations on a booked line, through the supplier-call engine', () => {
  test('the attempt is committed with the move to stopping before the supplier hears of it; the answer stops the line', async () => {
    const { bookingId, lineId } = await confirmedLine();
    const job = await pauseRequested(bookingId, lineId);
    const { held, run } = await opInFlight(job);
    const during = lineOf<Line>(await readBooking(api, buyer, bookingId), lineId);
    expect(during).toMatchObject({ status: 'stopping', pendingOperation: 'pause' });
    const open = during.attempts.find((a) => a.operation === 'pause')!;
    expect(open.status).toBe('open');
    expect(during.providerAttemptId).toBe(open.id);
    held.answer({ kind: 'applied', providerReference: 'sup-1' });
    expect(await run).toBe('applied');
    expect(lineOf<Line>(await readBooking(api, buyer, bookingId), lineId)).toMatchObject({
      status: 'stopped',
      stop: { kind: 'pause' },
      pendingOperation: null,
    });
    expect(held.calls).toBe(1);
  });

  test('a pause answered after an operator marked it uncertain is kept as evidence and moves nothing', async () => {
    const { bookingId, lineId } = await confirmedLine();
    const job = await pauseRequested(bookingId, lineId);
    const { held, run } = await opInFlight(job);
    const stopping = lineOf<Line>(await readBooking(api, buyer, bookingId), lineId);
    const marked = await post(api, operator, `/api/v1/operator/bookings/${bookingId}/lines/${lineId}/uncertain`, {
      expectedVersion: stopping.version,
      evidence: 'The supplier desk cannot say whether the pause landed.',
    });
    expect(marked.status).toBe(200);
    held.answer({ kind: 'applied', providerReference: 'sup-1' });
    expect(await run).toBe('outcome-recorded-for-reconciliation');
    const after = await readBooking(api, buyer, bookingId);
    const line = lineOf<Line>(after, lineId);
    expect(line).toMatchObject({ status: 'reconciliation-required', pendingOperation: 'pause' });
    expect(line.attempts.find((a) => a.operation === 'pause')).toMatchObject({ status: 'unknown', lateOutcome: { kind: 'applied' } });
    expect(after.events.filter((e) => e.action === 'line.late-supplier-answer').map((e) => e.detail)).toEqual([
      expect.objectContaining({ operation: 'pause', outcome: { kind: 'applied', providerReference: 'sup-1' } }),
    ]);
    // The operation in doubt is named on the operation too, with the person's evidence.
    expect(await env.db('line_operations').where({ id: job.operationId }).first('status', 'reason')).toEqual({
      status: 'reconciliation-required',
      reason: 'The supplier desk cannot say whether the pause landed.',
    });
  });

  test('a re-delivered operation job that finds its attempt open never calls again: the line goes to reconciliation', async () => {
    const { bookingId, lineId } = await confirmedLine();
    const job = await pauseRequested(bookingId, lineId);
    const first = await opInFlight(job);
    // The worker died mid-call; the queue delivers the job again.
    const again = heldSupplier<LineOperationOutcome>();
    const second = await executeLineJob(env.db, heldAdapter(heldSupplier<BookingOutcome>(), 'sandbox-ctv', again), job, engineOptions(env));
    expect(second).toBe('reconciliation-required');
    expect(again.calls).toBe(0);
    expect(lineOf<Line>(await readBooking(api, buyer, bookingId), lineId)).toMatchObject({
      status: 'reconciliation-required',
      pendingOperation: 'pause',
    });
    first.held.answer({ kind: 'refused', reason: 'late refusal' });
    expect(await first.run).toBe('outcome-recorded-for-reconciliation');
  });

  test('a pause stranded by a dead worker is swept to reconciliation once its job is gone; the supplier is never called again', async () => {
    const { bookingId, lineId } = await confirmedLine();
    const job = await pauseRequested(bookingId, lineId);
    // The call started and the process died: the attempt stays open.
    const { held, run } = await opInFlight(job);
    const workers = await env.workers({ SUPPLIER_TIMEOUT_MS: '100', ATTEMPT_STUCK_GRACE_MS: '0', WORKER_QUEUES: 'housekeeping' });
    const queue = new Queue('supplier.sandbox-ctv', { connection: env.redis, prefix: queuePrefix(env.prefix, 'supplier.sandbox-ctv') });
    const jobId = `line-operation-${job.operationId}`;
    // The sweep looks only at attempts open for longer than a call can take (100 ms here).
    await until('the attempt is past its call time', async () =>
      Boolean(
        await env.db('supplier_attempts').where({ job_id: jobId }).whereRaw("created_at < now() - interval '200 milliseconds'").first('id'),
      ),
    );
    // While its job is still in the queue the sweep leaves the attempt alone: that job may yet finish it.
    expect(await queue.getJob(jobId)).toBeTruthy();
    await runMaintenanceJob(env, 'sweep-stuck-attempts');
    expect(lineOf<Line>(await readBooking(api, buyer, bookingId), lineId).status).toBe('stopping');
    // The job is gone (its worker died and it failed): nothing else can finish the attempt now.
    await queue.remove(jobId);
    await runMaintenanceJob(env, 'sweep-stuck-attempts');
    await until(
      'the line is in reconciliation',
      async () => lineOf<Line>(await readBooking(api, buyer, bookingId), lineId).status === 'reconciliation-required',
    );
    const attempt = await env.db('supplier_attempts').where({ line_id: lineId, operation: 'pause' }).first();
    expect(attempt).toMatchObject({ status: 'unknown', job_id: jobId });
    held.answer({ kind: 'applied' });
    expect(await run).toBe('outcome-recorded-for-reconciliation');
    expect(held.calls).toBe(1);
    await queue.close();
    await workers.close();
  });
});

describe('a stop racing a late booking answer and a staff resolve', () => {
  test('one of the stop and the resolve wins, the late answer is evidence, nothing deadlocks, and the booking adds up', async () => {
    for (let round = 0; round < 6; round++) {
      const { booking } = await launchPlan(env, api, [{ channel: 'ctv', adapterKey: 'sandbox-ctv', budgetMinor: 10_000 }]);
      const lineId = booking.lines[0]!.id;
      const held = heldSupplier<BookingOutcome>();
      const run = executeLineJob(env.db, heldAdapter(held), { bookingId: booking.id, lineId }, engineOptions(env));
      await held.received;
      const inProgress = lineOf<Line>(await readBooking(api, buyer, booking.id), lineId);
      expect(
        (
          await post(api, operator, `/api/v1/operator/bookings/${booking.id}/lines/${lineId}/uncertain`, {
            expectedVersion: inProgress.version,
            evidence: 'No answer from the desk yet.',
          })
        ).status,
      ).toBe(200);
      const doubt = lineOf<Line>(await readBooking(api, buyer, booking.id), lineId);
      const [, resolve, stop] = await Promise.all([
        jitter(30).then(() => held.answer({ kind: 'confirmed', providerReference: 'late-ref' })),
        jitter(30).then(() =>
          post(api, staff, `/api/v1/internal/fulfilment/bookings/${booking.id}/lines/${lineId}/resolve`, {
            expectedVersion: doubt.version,
            outcome: 'applied',
            providerReference: 'late-ref',
            evidence: 'The supplier confirmed by phone.',
          }),
        ),
        jitter(30).then(() => post(api, buyer, `/api/v1/bookings/${booking.id}/lines/${lineId}/stop`, { expectedVersion: doubt.version })),
      ]);
      expect(await run).toBe('outcome-recorded-for-reconciliation');
      // Exactly one of the two people's changes took effect; the other was told the line had moved.
      expect([resolve.status === 200, stop.status === 202].filter(Boolean)).toHaveLength(1);
      expect(resolve.status === 200 ? stop.status : resolve.status).toBe(409);
      const after = await readBooking(api, buyer, booking.id);
      const line = lineOf<Line>(after, lineId);
      if (stop.status === 202) expect(line).toMatchObject({ status: 'stop-requested', pendingOperation: 'stop' });
      else expect(line).toMatchObject({ status: 'confirmed', providerReference: 'late-ref' });
      expect(after.events.filter((e) => e.action === 'line.late-supplier-answer')).toHaveLength(1);
      const stored = await env.db('bookings').where({ id: booking.id }).first('line_counts');
      expect(
        sameCounts(
          stored.line_counts,
          after.lines.map((l) => l.status),
        ),
      ).toBe(true);
    }
  });
});

describe('a workflow supplier’s operations are staff work', () => {
  test('a paused manual line waits for staff, who claim, start and confirm it; the person-held attempt is never swept', async () => {
    const creative = await makeCreative(api, buyer, 'ctv');
    const { booking } = await launchPlan(env, api, [
      { channel: 'ctv', adapterKey: 'manual', budgetMinor: 5_000, creativeIds: [creative.id] },
    ]);
    const lineId = booking.lines[0]!.id;
    const base = `/api/v1/internal/fulfilment/bookings/${booking.id}/lines/${lineId}`;
    const version = async () => lineOf<Line>(await readBooking(api, buyer, booking.id), lineId).version;
    const workers = await env.workers({
      WORKER_QUEUES: 'supplier.manual,housekeeping',
      SUPPLIER_TIMEOUT_MS: '100',
      ATTEMPT_STUCK_GRACE_MS: '0',
    });
    const workflowSteps = async () =>
      Boolean((lineOf<Line>(await readBooking(api, buyer, booking.id), lineId) as { workflowSteps?: unknown }).workflowSteps);
    await until('the booking is staff work', workflowSteps);
    for (const step of ['claim', 'start'])
      expect((await post(api, staff, `${base}/${step}`, { expectedVersion: await version() })).status).toBe(200);
    expect(
      (await post(api, staff, `${base}/confirm`, { expectedVersion: await version(), providerReference: 'IO-9', evidence: 'Signed IO.' }))
        .status,
    ).toBe(200);

    expect(
      (await post(api, buyer, `/api/v1/bookings/${booking.id}/lines/${lineId}/pause`, { expectedVersion: await version() })).status,
    ).toBe(202);
    await until('the pause is staff work', workflowSteps);
    const queue = await json<{ bookings: BookingBody[] }>(await api.fetch('/api/v1/internal/fulfilment/bookings', { token: staff }));
    expect(
      lineOf<Line>(
        queue.bookings.find((b) => b.id === booking.id)!,
        lineId,
      ),
    ).toMatchObject({ status: 'stop-requested', pendingOperation: 'pause' });
    // Confirming before starting is refused: the change must be under way first.
    const early = await post(api, staff, `${base}/confirm`, {
      expectedVersion: await version(),
      evidence: 'Paused on the supplier portal.',
    });
    expect(early.status).toBe(409);
    for (const step of ['claim', 'start'])
      expect((await post(api, staff, `${base}/${step}`, { expectedVersion: await version() })).status).toBe(200);
    const managed = await env.db('supplier_attempts').where({ line_id: lineId, operation: 'managed-pause' }).first();
    expect(managed.status).toBe('open');
    await runMaintenanceJob(env, 'sweep-stuck-attempts');
    expect((await env.db('supplier_attempts').where({ id: managed.id }).first()).status).toBe('open');
    const done = await post(api, staff, `${base}/confirm`, {
      expectedVersion: await version(),
      evidence: 'Paused on the supplier portal at 21:10.',
    });
    expect(done.status).toBe(200);
    expect(lineOf<Line>((await json<{ booking: BookingBody }>(done)).booking, lineId)).toMatchObject({
      status: 'stopped',
      stop: { kind: 'pause' },
      pendingOperation: null,
    });
    expect((await env.db('supplier_attempts').where({ id: managed.id }).first()).status).toBe('confirmed');
    await workers.close();
  });
});
