import { createTestEnv, type TestApi, type TestEnv } from '../support/api';
import { expectCountsAgree, launchPlan, post, type BookingBody } from '../support/bookings';
import { confirmByStatements, noneFailed, operationAnswer, startStep } from '../support/line-steps';
import { engineOptions, heldAdapter, heldSupplier } from '../suppliers/support';
import type { BookingOutcome, LineOperationOutcome } from '../../shared/adapters/adapter';
import { lineBatchers, recordAnswers, startSteps, type AnswerStep, type StartStep, type Started } from '../../shared/bookings/lines/batch';
import { executeLineJob } from '../../shared/bookings/lines/flow';
import { isStepAborted } from '../../shared/bookings/lines/store';
import { newAttemptId } from '../../shared/suppliers/attempts';

/**
 * A pause, resume or stop's two steps (start the call, record a sandbox line's answer), written
 * for many lines in one statement: each line changes as the locked path would change it, a line
 * no longer as expected is left out (null) with nothing written for it, and the attempt closes
 * with the line's move.
 */
let env: TestEnv;
let api: TestApi;
beforeAll(async () => {
  // No workers: every step here is taken by hand.
  env = await createTestEnv();
  api = await env.api();
});
afterAll(() => env.close());

const CHANNELS = ['ctv', 'audio', 'tv', 'cinema', 'dooh'];

/** A sandbox booking of `n` lines, confirmed by their booking's statements, and its campaign asked to `control`. */
async function controlled(n: number, org: string, control: 'pause' | 'stop' = 'pause') {
  const { booking, campaignId, token } = await launchPlan(
    env,
    api,
    CHANNELS.slice(0, n).map((c) => ({ channel: c, adapterKey: `sandbox-${c}`, budgetMinor: 10_000 })),
    org,
  );
  // One reference for every line: the twin test compares two bookings' lines.
  await confirmByStatements(env.db, booking, () => 'as booked');
  expect((await post(api, token, `/api/v1/campaigns/${campaignId}/${control}`)).status).toBe(202);
  return { booking, campaignId, token };
}

/** The start step of the operation the line waits on. */
async function startOf(booking: BookingBody, line: BookingBody['lines'][number]): Promise<StartStep> {
  const row = await env.db('booking_lines').where({ id: line.id }).first('operation_id');
  return startStep(booking.id, line, row.operation_id);
}

/** The answer step the flow builds for a sandbox line's answer (applied, or refused for `reason`). */
const outcomeOf = (s: StartStep, started: Started, reason?: string): AnswerStep =>
  operationAnswer(s, started.op!, reason === undefined ? { kind: 'applied', providerReference: 'sup-1' } : { kind: 'refused', reason });

/** The booking as stored: its row, lines, operations, attempts and events, oldest event first. */
async function stored(bookingId: string) {
  return {
    booking: await env.db('bookings').where({ id: bookingId }).first('status', 'version', 'line_counts'),
    lines: await env.db('booking_lines').where({ booking_id: bookingId }).orderBy('id'),
    operations: await env.db('line_operations').where({ booking_id: bookingId }).orderBy('id'),
    attempts: await env.db('supplier_attempts').where({ booking_id: bookingId }).orderBy('id'),
    events: await env.db('booking_events').where({ booking_id: bookingId }).orderBy('seq').select('action', 'line_id', 'detail'),
  };
}
type Stored = Awaited<ReturnType<typeof stored>>;

/** What the store holds of one line: its row, operations, attempts and events. */
const ofLine = (s: Stored, lineId: string) => ({
  line: s.lines.find((l) => l.id === lineId),
  operations: s.operations.filter((o) => o.line_id === lineId),
  attempts: s.attempts.filter((t) => t.line_id === lineId),
  events: s.events.filter((e) => e.line_id === lineId),
});

const expectConsistent = (bookingId: string) => expectCountsAgree(env.db, bookingId);

const started = async (steps: StartStep[]) => noneFailed(await startSteps(env.db, steps));
const recorded = async (steps: AnswerStep[]) => noneFailed(await recordAnswers(env.db, steps));

describe('operation starts in one statement', () => {
  test('lines of several bookings start together: each line, attempt, operation and event as its own start writes them', async () => {
    const a = (await controlled(3, 'org-opbatch-1')).booking;
    const b = (await controlled(2, 'org-opbatch-1')).booking;
    const steps = [await startOf(a, a.lines[0]!), await startOf(b, b.lines[1]!), await startOf(a, a.lines[2]!)];
    const versionA = (await stored(a.id)).booking.version;

    const result = await started(steps);

    result.forEach((r, i) => {
      const s = steps[i]!;
      expect(r!.line).toMatchObject({ id: s.lineId, status: 'stopping', provider_attempt_id: s.attemptId, operation_id: s.operationId });
      expect(r!.op).toMatchObject({ id: s.operationId, kind: 'pause', from_status: 'confirmed' });
      // Read with the line: the campaign's flight and the attempt that booked it.
      expect(r!.read.start_date).toBeTruthy();
      expect(r!.read.booking_attempt_id).toMatch(/^att_/);
    });
    const afterA = await stored(a.id);
    expect(afterA.booking).toMatchObject({ version: versionA + 1 });
    expect(afterA.booking.line_counts).toMatchObject({ 'stop-requested': 1, stopping: 2 });
    for (const s of [steps[0]!, steps[2]!]) {
      const mine = ofLine(afterA, s.lineId);
      expect(mine.attempts.find((t) => t.operation === 'pause')).toMatchObject({
        id: s.attemptId,
        status: 'open',
        adapter_key: s.adapterKey,
        job_id: `line-operation-${s.operationId}`,
      });
      expect(mine.operations).toEqual([expect.objectContaining({ id: s.operationId, status: 'in-flight', attempt_id: s.attemptId })]);
      expect(mine.events.at(-1)).toEqual({
        action: 'line.pause-started',
        line_id: s.lineId,
        detail: { from: 'stop-requested', to: 'stopping', attemptId: s.attemptId, operation: 'pause', operationId: s.operationId },
      });
    }
    // The line left out of the batch still waits, untouched.
    expect(ofLine(afterA, a.lines[1]!.id).line).toMatchObject({ status: 'stop-requested' });
    await expectConsistent(a.id);
    await expectConsistent(b.id);
  });

  test('a line no longer as expected is left out and told so, with nothing written for it; the others start', async () => {
    const { booking } = await controlled(5, 'org-opbatch-2');
    const steps = await Promise.all(booking.lines.map((l) => startOf(booking, l)));
    const [moved, superseded, attemptOpen, otherAdapter, fine] = steps as [StartStep, ...StartStep[]];
    // Its status moved on (a person settled it), its operation superseded by another, an attempt already open.
    await env.db('booking_lines').where({ id: moved.lineId }).update({ status: 'reconciliation-required' });
    await env.db('booking_lines').where({ id: superseded!.lineId }).update({ operation_id: fine!.operationId });
    await env.db('supplier_attempts').insert({
      id: newAttemptId(),
      subject_kind: 'line',
      subject_id: attemptOpen!.lineId,
      adapter_key: attemptOpen!.adapterKey,
      operation: 'pause',
      line_id: attemptOpen!.lineId,
      booking_id: booking.id,
      job_id: 'elsewhere',
      status: 'open',
    });
    const before = await stored(booking.id);

    const result = await started([moved, superseded!, attemptOpen!, { ...otherAdapter!, adapterKey: 'sandbox-other' }, fine!]);

    expect(result.map((r) => r?.line.id ?? null)).toEqual([null, null, null, null, fine!.lineId]);
    const after = await stored(booking.id);
    for (const s of [moved, superseded!, attemptOpen!, otherAdapter!]) expect(ofLine(after, s.lineId)).toEqual(ofLine(before, s.lineId));
    expect(ofLine(after, fine!.lineId).line).toMatchObject({ status: 'stopping', provider_attempt_id: fine!.attemptId });
    expect(after.booking.version).toBe(before.booking.version + 1);
  });

  test("a budget change is never started without the line's lock: it may move money; its job starts it by the same statement under the lock", async () => {
    const { booking, campaignId, token } = await controlled(1, 'org-opbatch-3');
    // Resumed and settled by hand, then amended.
    const line = booking.lines[0]!;
    const start = await startOf(booking, line);
    const [s] = await started([start]);
    await recorded([outcomeOf(start, s!)]);
    const version = (await env.db('bookings').where({ id: booking.id }).first('version')).version;
    const amended = await api.fetch(`/api/v1/campaigns/${campaignId}/amendments`, {
      method: 'POST',
      token,
      headers: { 'content-type': 'application/json', 'idempotency-key': crypto.randomUUID() },
      body: JSON.stringify({ expectedVersion: version, lines: [{ lineId: line.id, budgetMinor: 9_000 }] }),
    });
    expect(amended.status).toBe(202);
    const before = await stored(booking.id);

    expect(await started([await startOf(booking, line)])).toEqual([null]);
    expect(await stored(booking.id)).toEqual(before);

    // Its job: the line's lock, then the same statement, its event naming the change's figures.
    const operationId = (await startOf(booking, line)).operationId!;
    const held = heldSupplier<LineOperationOutcome>();
    const run = executeLineJob(
      env.db,
      heldAdapter(heldSupplier<BookingOutcome>(), line.adapterKey, held),
      { bookingId: booking.id, lineId: line.id, operationId },
      engineOptions(env),
    );
    await held.received;
    const asked = held.requests[0] as { attemptId: string; newBudgetMinor: number };
    expect(asked.newBudgetMinor).toBe(9_000);
    const mine = ofLine(await stored(booking.id), line.id);
    expect(mine.line).toMatchObject({ status: 'stopped', provider_attempt_id: asked.attemptId, operation_id: operationId });
    expect(mine.operations.find((o) => o.id === operationId)).toMatchObject({ status: 'in-flight', attempt_id: asked.attemptId });
    expect(mine.attempts.find((t) => t.id === asked.attemptId)).toMatchObject({
      status: 'open',
      operation: 'change-budget',
      job_id: `line-operation-${operationId}`,
    });
    expect(mine.events.at(-1)).toEqual({
      action: 'line.change-budget-started',
      line_id: line.id,
      detail: {
        from: 'stopped',
        to: 'stopped',
        attemptId: asked.attemptId,
        operation: 'change-budget',
        operationId,
        budgetFromMinor: 10_000,
        budgetToMinor: 9_000,
      },
    });
    held.answer({ kind: 'applied', providerReference: null });
    expect(await run).toBe('applied');
    expect((await env.db('booking_lines').where({ id: line.id }).first()).budget_minor).toBe('9000');
  });
});

describe('sandbox answers in one statement', () => {
  test('applied and refused answers of several lines together, each attempt closed with its line', async () => {
    const { booking } = await controlled(3, 'org-opbatch-4');
    const steps = await Promise.all(booking.lines.map((l) => startOf(booking, l)));
    const starts = await started(steps);
    const outcomes = [
      outcomeOf(steps[0]!, starts[0]!),
      outcomeOf(steps[1]!, starts[1]!, 'locked for changes'),
      outcomeOf(steps[2]!, starts[2]!),
    ];

    const result = await recorded(outcomes);

    expect(result.map((l) => l?.status)).toEqual(['stopped', 'confirmed', 'stopped']);
    const after = await stored(booking.id);
    expect(after.booking.status).toBe('partially-confirmed');
    for (const [i, o] of outcomes.entries()) {
      const mine = ofLine(after, o.lineId);
      expect(mine.line).toMatchObject({ operation_id: null, provider_reference: o.applied ? o.providerReference : 'as booked' });
      expect(mine.line!.stop).toEqual(o.applied ? expect.objectContaining({ kind: 'pause' }) : null);
      expect(mine.attempts.find((t) => t.id === o.attemptId)).toMatchObject({ status: o.close.status, finished_at: expect.any(Date) });
      expect(mine.operations[0]).toMatchObject({
        status: o.applied ? 'applied' : 'refused',
        reason: o.evidence,
        settled_at: expect.any(Date),
      });
      expect(mine.events.at(-1)).toEqual({
        action: i === 1 ? 'line.pause-refused' : 'line.paused',
        line_id: o.lineId,
        detail: { from: 'stopping', to: o.to, ...o.detail },
      });
    }
    expect(after.events.at(-1)).toMatchObject({ action: 'booking.status-changed', line_id: null });
    await expectConsistent(booking.id);
  });

  test('a line whose status moved or operation was superseded is left out, nothing written for it', async () => {
    const { booking } = await controlled(3, 'org-opbatch-5');
    const steps = await Promise.all(booking.lines.map((l) => startOf(booking, l)));
    const starts = await started(steps);
    await env.db('booking_lines').where({ id: steps[0]!.lineId }).update({ execution_mode: 'live' });
    const before = await stored(booking.id);

    const result = await recorded([
      outcomeOf(steps[0]!, starts[0]!), // a live line: its money moves under its lock
      { ...outcomeOf(steps[1]!, starts[1]!), operationId: crypto.randomUUID() }, // another operation
      { ...outcomeOf(steps[2]!, starts[2]!), from: 'stop-requested' }, // not where the line is
    ]);

    expect(result).toEqual([null, null, null]);
    expect(await stored(booking.id)).toEqual(before);
  });

  test('an attempt already closed undoes the statement; batched, that line fails alone and the others are written', async () => {
    const { booking } = await controlled(3, 'org-opbatch-6');
    const steps = await Promise.all(booking.lines.map((l) => startOf(booking, l)));
    const starts = await started(steps);
    await env.db('supplier_attempts').where({ id: steps[1]!.attemptId }).update({ status: 'unknown' });
    const before = await stored(booking.id);
    const outcomes = steps.map((s, i) => outcomeOf(s, starts[i]!));

    expect(isStepAborted(await recordAnswers(env.db, outcomes).catch((err: unknown) => err))).toBe(true);
    expect(await stored(booking.id)).toEqual(before);

    const settled = await Promise.allSettled(outcomes.map((o) => lineBatchers(env.db).answer.submit(o)));
    expect(settled.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    const after = await stored(booking.id);
    expect(ofLine(after, steps[1]!.lineId)).toEqual(ofLine(before, steps[1]!.lineId));
    expect(after.lines.map((l) => [l.id, l.status]).sort()).toEqual(
      steps.map((s, i) => [s.lineId, i === 1 ? 'stopping' : 'stopped']).sort(),
    );
    await expectConsistent(booking.id);
  });
});

describe('the batched and the locked path write the same', () => {
  /** Ids, times and versions aside (and the live flag that sent the twin down the locked path): what a line's operation left. */
  const comparable = (s: Stored, lineId: string) => {
    const mine = ofLine(s, lineId);
    const ids = new Map<string, string>();
    const named = (v: unknown) => (typeof v === 'string' ? (ids.get(v) ?? ids.set(v, `id${ids.size}`).get(v)!) : v);
    const strip = (detail: Record<string, unknown> | null) =>
      detail && Object.fromEntries(Object.entries(detail).map(([k, v]) => [k, /Id$/.test(k) ? named(v) : v]));
    const {
      id: _i,
      booking_id: _b,
      channel: _c,
      adapter_key: _k,
      channel_campaign_id: _cc,
      position: _p,
      plan_line_id: _pl,
      started_at: _s,
      created_at: _ca,
      updated_at: _u,
      confirmed_at: _cf,
      provider_reference: ref,
      provider_attempt_id: pa,
      operation_id: op,
      execution_mode: _m,
      stop,
      ...line
    } = mine.line!;
    return {
      line: {
        ...line,
        provider_reference: ref === 'sup-1' ? ref : 'as booked',
        provider_attempt_id: named(pa),
        operation_id: named(op),
        stop: stop && { ...stop, requestedAt: 'at' },
      },
      operations: mine.operations.map((o) => ({
        kind: o.kind,
        status: o.status,
        from_status: o.from_status,
        reason: o.evidence,
        attempt_id: named(o.attempt_id),
        settled: !!o.settled_at,
      })),
      // The booking's attempt, then the operation's.
      attempts: [...mine.attempts]
        .sort((x, y) => Number(y.operation === 'book') - Number(x.operation === 'book'))
        .map((t) => ({ operation: t.operation, status: t.status, detail: t.detail, open: !t.finished_at })),
      events: mine.events.map((e) => ({ action: e.action, detail: strip(e.detail) })),
    };
  };

  test.each([
    ['pause', 'applied'],
    ['pause', 'refused'],
    ['stop', 'applied'],
  ] as const)('a %s %s', async (control, answer) => {
    const batched = await controlled(2, `org-opbatch-twin-${control}-${answer}`, control);
    const locked = await controlled(2, `org-opbatch-twin-${control}-${answer}`, control);
    const outcome: LineOperationOutcome =
      answer === 'applied' ? { kind: 'applied', providerReference: 'sup-1' } : { kind: 'refused', reason: 'locked for changes' };

    // The batched path: both statements.
    const step = await startOf(batched.booking, batched.booking.lines[0]!);
    const [s] = await started([step]);
    expect(await recorded([outcomeOf(step, s!, answer === 'refused' ? 'locked for changes' : undefined)])).toEqual([
      expect.objectContaining({ id: step.lineId }),
    ]);
    // The locked path, on the twin: a job whose adapter the start statement does not take, for a line
    // whose answer the outcome statement does not take (a live line's).
    const twin = locked.booking.lines[0]!;
    await env.db('booking_lines').where({ id: twin.id }).update({ execution_mode: 'live' });
    const held = heldSupplier<LineOperationOutcome>();
    const op = (await env.db('booking_lines').where({ id: twin.id }).first('operation_id')).operation_id as string;
    const run = executeLineJob(
      env.db,
      heldAdapter(heldSupplier<BookingOutcome>(), 'sandbox-tv', held),
      { bookingId: locked.booking.id, lineId: twin.id, operationId: op },
      engineOptions(env),
    );
    await held.received;
    held.answer(outcome);
    expect(await run).toBe(answer);

    const [b, l] = [await stored(batched.booking.id), await stored(locked.booking.id)];
    expect(comparable(b, step.lineId)).toEqual(comparable(l, twin.id));
    expect(b.booking.line_counts).toEqual(l.booking.line_counts);
    expect(b.booking.status).toBe(l.booking.status);
    expect(b.booking.version - batched.booking.version).toBe(l.booking.version - locked.booking.version);
    const statusChanges = (x: Stored) => x.events.filter((e) => e.action === 'booking.status-changed');
    expect(statusChanges(b)).toEqual(statusChanges(l));
  });
});
