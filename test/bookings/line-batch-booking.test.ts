import { createTestEnv, type TestApi, type TestEnv } from '../support/api';
import { expectCountsAgree, launchPlan, sevenSandboxLines, type BookingBody } from '../support/bookings';
import { bookingAnswer, noneFailed, startStep } from '../support/line-steps';
import { lineBatchers, recordAnswers, startSteps, type AnswerStep, type StartStep } from '../../shared/bookings/lines/batch';
import { isStepAborted } from '../../shared/bookings/lines/store';
import { createDb, type Knex } from '../../shared/db/knex';
import { newAttemptId } from '../../shared/suppliers/attempts';

/**
 * Bookings' usual steps, written for many lines in one statement (shared/bookings/lines/batch.ts,
 * the statements every batched operation shares): each line changes as its own step would, a
 * line not as expected is left alone, and each booking's counts, status and events take in
 * every line of the batch.
 */
let env: TestEnv;
let api: TestApi;
beforeAll(async () => {
  env = await createTestEnv();
  api = await env.api();
});
afterAll(() => env.close());

type Line = BookingBody['lines'][number];
const startOf = (booking: BookingBody, line: Line) => startStep(booking.id, line);
const confirmOf = (s: StartStep, ref = `ref-${s.lineId.slice(0, 8)}`) => bookingAnswer(s, { kind: 'confirmed', providerReference: ref });
const rejectOf = (s: StartStep, reason = 'inventory unavailable') => bookingAnswer(s, { kind: 'rejected', reason });

/** The booking as stored: status, counts, lines, attempts and events, oldest event first. */
async function stored(bookingId: string) {
  const booking = await env.db('bookings').where({ id: bookingId }).first('status', 'version', 'line_counts');
  const lines = await env.db('booking_lines').where({ booking_id: bookingId }).orderBy('id');
  const attempts = await env.db('supplier_attempts').where({ booking_id: bookingId }).orderBy('id');
  const events = await env.db('booking_events').where({ booking_id: bookingId }).orderBy('seq').select('action', 'line_id', 'detail');
  return { booking, lines, attempts, events };
}

const expectConsistent = (bookingId: string) => expectCountsAgree(env.db, bookingId);

const startedLines = async (steps: StartStep[]) => noneFailed(await startSteps(env.db, steps));
const recordedOutcomes = async (steps: AnswerStep[]) => noneFailed(await recordAnswers(env.db, steps));

describe('line starts in one statement', () => {
  test('start lines of several bookings: each line, attempt and event as its own step would write them, each booking once', async () => {
    const a = (await launchPlan(env, api, sevenSandboxLines().slice(0, 3), 'org-batch-1')).booking;
    const b = (await launchPlan(env, api, sevenSandboxLines().slice(0, 2), 'org-batch-1')).booking;
    const steps = [startOf(a, a.lines[0]!), startOf(b, b.lines[1]!), startOf(a, a.lines[2]!), startOf(b, b.lines[0]!)];
    const versionBefore = (await stored(a.id)).booking.version;

    const started = await startedLines(steps);

    expect(started.every((s) => s !== null)).toBe(true);
    started.forEach((s, i) => {
      expect(s!.line).toMatchObject({ id: steps[i]!.lineId, status: 'in-progress', provider_attempt_id: steps[i]!.attemptId });
      // The campaign's flight, read with the line; a booking has no operation record.
      expect(s!.read.start_date).toBeTruthy();
      expect(s!.read.end_date).toBeTruthy();
      expect(s!.op).toBeNull();
    });
    const afterA = await stored(a.id);
    // Booking a: two lines started, one left queued; its version moved once for both.
    expect(afterA.booking).toMatchObject({ status: 'in-progress', version: versionBefore + 1 });
    expect(afterA.booking.line_counts).toMatchObject({ queued: 1, 'in-progress': 2 });
    expect(afterA.attempts.map((t) => [t.id, t.status, t.line_id, t.subject_id]).sort()).toEqual(
      [steps[0]!, steps[2]!].map((s) => [s.attemptId, 'open', s.lineId, s.lineId]).sort(),
    );
    const startedEvents = afterA.events.filter((e) => e.action === 'line.attempt-started');
    expect(startedEvents.map((e) => e.line_id).sort()).toEqual([steps[0]!.lineId, steps[2]!.lineId].sort());
    expect(startedEvents.find((e) => e.line_id === steps[0]!.lineId)!.detail).toEqual({
      from: 'queued',
      to: 'in-progress',
      attemptId: steps[0]!.attemptId,
      adapterKey: a.lines[0]!.adapterKey,
    });
    // One status change, after both lines' events.
    const statusEvents = afterA.events.filter((e) => e.action === 'booking.status-changed');
    expect(statusEvents).toEqual([{ action: 'booking.status-changed', line_id: null, detail: { from: 'queued', to: 'in-progress' } }]);
    expect(afterA.events.at(-1)!.action).toBe('booking.status-changed');
    await expectConsistent(a.id);
    await expectConsistent(b.id);
    expect((await stored(b.id)).booking.line_counts).toMatchObject({ 'in-progress': 2 });
  });

  test('a line not as its step expects is left alone, and the others start', async () => {
    const { booking } = await launchPlan(env, api, sevenSandboxLines().slice(0, 4), 'org-batch-2');
    const [l0, l1, l2, l3] = booking.lines;
    const first = startOf(booking, l0!);
    await startedLines([first]);
    const before = await stored(booking.id);
    const steps = [
      { ...first, attemptId: newAttemptId() }, // already in progress
      { ...startOf(booking, l1!), adapterKey: 'sandbox-other' }, // not this adapter's line
      { ...startOf(booking, l2!), bookingId: (await launchPlan(env, api, sevenSandboxLines().slice(0, 1), 'org-batch-2')).booking.id },
      startOf(booking, l3!),
    ];

    const started = await startedLines(steps);

    expect(started.map((s) => (s ? s.line.id : null))).toEqual([null, null, null, l3!.id]);
    const after = await stored(booking.id);
    expect(after.lines.filter((l) => l.id !== l3!.id)).toEqual(before.lines.filter((l) => l.id !== l3!.id));
    expect(after.attempts.map((t) => t.id).sort()).toEqual([first.attemptId, steps[3]!.attemptId].sort());
    await expectConsistent(booking.id);
  });

  test('a line with an attempt already open is not started again', async () => {
    const { booking } = await launchPlan(env, api, sevenSandboxLines().slice(0, 2), 'org-batch-3');
    const [l0, l1] = booking.lines;
    const s0 = startOf(booking, l0!);
    await startedLines([s0]);
    // The line back to queued with its attempt still open: a start must not open a second one.
    await env.db('booking_lines').where({ id: l0!.id }).update({ status: 'queued' });
    await env
      .db('bookings')
      .where({ id: booking.id })
      .update({ line_counts: JSON.stringify({ queued: 2 }), status: 'queued' });

    const started = await startedLines([startOf(booking, l0!), startOf(booking, l1!)]);

    expect(started.map((s) => (s ? s.line.id : null))).toEqual([null, l1!.id]);
    const { attempts } = await stored(booking.id);
    expect(attempts.filter((t) => t.line_id === l0!.id).map((t) => t.id)).toEqual([s0.attemptId]);
  });
});

describe('sandbox outcomes in one statement', () => {
  test('confirmed and rejected lines of several bookings, each attempt closed with its line', async () => {
    const a = (await launchPlan(env, api, sevenSandboxLines().slice(0, 2), 'org-batch-4')).booking;
    const b = (await launchPlan(env, api, sevenSandboxLines().slice(0, 2), 'org-batch-4')).booking;
    const starts = [...a.lines.map((l) => startOf(a, l)), ...b.lines.map((l) => startOf(b, l))];
    await startedLines(starts);
    const outcomes = [confirmOf(starts[0]!), confirmOf(starts[1]!), confirmOf(starts[2]!), rejectOf(starts[3]!)];

    const recorded = await recordedOutcomes(outcomes);

    expect(recorded.map((l) => l?.status)).toEqual(['confirmed', 'confirmed', 'confirmed', 'rejected']);
    const afterA = await stored(a.id);
    expect(afterA.booking.status).toBe('confirmed');
    for (const [i, line] of afterA.lines.entries()) {
      const o = outcomes.find((x) => x.lineId === line.id)!;
      expect(line).toMatchObject({ status: 'confirmed', provider_reference: o.providerReference, evidence: null });
      expect(line.confirmed_at).toBeInstanceOf(Date);
      expect(afterA.attempts[i]).toBeDefined();
    }
    for (const t of afterA.attempts) {
      const o = outcomes.find((x) => x.attemptId === t.id)!;
      expect(t).toMatchObject({ status: 'confirmed', provider_reference: o.providerReference, detail: o.close.detail });
      expect(t.finished_at).toBeInstanceOf(Date);
    }
    expect(afterA.events.filter((e) => e.action === 'line.confirmed').map((e) => e.detail)).toEqual(
      expect.arrayContaining(outcomes.slice(0, 2).map((o) => ({ from: 'in-progress', to: 'confirmed', ...o.detail }))),
    );
    expect(afterA.events.at(-1)).toEqual({
      action: 'booking.status-changed',
      line_id: null,
      detail: { from: 'in-progress', to: 'confirmed' },
    });

    const afterB = await stored(b.id);
    expect(afterB.booking.status).toBe('partially-confirmed');
    const rejected = afterB.lines.find((l) => l.id === outcomes[3]!.lineId)!;
    expect(rejected).toMatchObject({ status: 'rejected', evidence: 'inventory unavailable', provider_reference: null, confirmed_at: null });
    expect(afterB.attempts.find((t) => t.id === outcomes[3]!.attemptId)).toMatchObject({ status: 'rejected', provider_reference: null });
    await expectConsistent(a.id);
    await expectConsistent(b.id);
  });

  test('a live line, a line waiting on another attempt and a line not in progress are left alone', async () => {
    const { booking } = await launchPlan(env, api, sevenSandboxLines().slice(0, 4), 'org-batch-5');
    const starts = booking.lines.map((l) => startOf(booking, l));
    await startedLines(starts.slice(0, 3));
    // A live line moves money in a transaction of its own, never in a batch.
    await env.db('booking_lines').where({ id: starts[0]!.lineId }).update({ execution_mode: 'live' });
    const before = await stored(booking.id);
    const outcomes = [
      confirmOf(starts[0]!),
      confirmOf({ ...starts[1]!, attemptId: newAttemptId() }),
      confirmOf(starts[3]!), // never started
      confirmOf(starts[2]!),
    ];

    const recorded = await recordedOutcomes(outcomes);

    expect(recorded.map((l) => l?.id ?? null)).toEqual([null, null, null, starts[2]!.lineId]);
    const after = await stored(booking.id);
    expect(after.lines.filter((l) => l.id !== starts[2]!.lineId)).toEqual(before.lines.filter((l) => l.id !== starts[2]!.lineId));
    expect(
      after.attempts
        .filter((t) => t.status === 'open')
        .map((t) => t.id)
        .sort(),
    ).toEqual([starts[0]!.attemptId, starts[1]!.attemptId].sort());
    await expectConsistent(booking.id);
  });

  test('a line whose attempt was closed without moving it undoes the whole statement', async () => {
    const { booking } = await launchPlan(env, api, sevenSandboxLines().slice(0, 2), 'org-batch-6');
    const starts = booking.lines.map((l) => startOf(booking, l));
    await startedLines(starts);
    await env.db('supplier_attempts').where({ id: starts[0]!.attemptId }).update({ status: 'unknown' });
    const before = await stored(booking.id);

    const failed = await recordAnswers(
      env.db,
      starts.map((s) => confirmOf(s)),
    ).catch((err: unknown) => err);

    expect(isStepAborted(failed)).toBe(true);
    expect(await stored(booking.id)).toEqual(before);
  });
});

describe('batching the steps of concurrent jobs', () => {
  test("one failing line's step fails alone; the steps batched with it are written", async () => {
    const { booking } = await launchPlan(env, api, sevenSandboxLines().slice(0, 4), 'org-batch-7');
    const starts = booking.lines.map((l) => startOf(booking, l));
    await startedLines(starts);
    await env.db('supplier_attempts').where({ id: starts[1]!.attemptId }).update({ status: 'unknown' });
    const { answer } = lineBatchers(env.db);

    const settled = await Promise.allSettled(starts.map((s) => answer.submit(confirmOf(s))));

    expect(settled.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled', 'fulfilled']);
    expect(isStepAborted((settled[1] as PromiseRejectedResult).reason)).toBe(true);
    const after = await stored(booking.id);
    expect(after.lines.map((l) => [l.id, l.status]).sort()).toEqual(
      starts.map((s, i) => [s.lineId, i === 1 ? 'in-progress' : 'confirmed']).sort(),
    );
    await expectConsistent(booking.id);
  });

  test('many jobs on two worker processes, lines of the same bookings racing: every count, status and attempt right, no deadlock', async () => {
    const bookings: BookingBody[] = [];
    for (let i = 0; i < 6; i++) bookings.push((await launchPlan(env, api, sevenSandboxLines(), 'org-batch-8')).booking);
    const pools: Knex[] = [env.db, createDb(env.database.url, { max: 4 })];
    try {
      const jobs = bookings.flatMap((b) => b.lines.map((l) => ({ b, l })));
      // Interleaved across bookings and processes, as two workers would take them.
      const run = async ({ b, l }: { b: BookingBody; l: Line }, i: number) => {
        const steps = lineBatchers(pools[i % 2]!);
        const s = startOf(b, l);
        const started = await steps.start.submit(s);
        if (!started) throw new Error(`line ${l.id} did not start`);
        const recorded = await steps.answer.submit(i % 5 === 0 ? rejectOf(s) : confirmOf(s));
        if (!recorded) throw new Error(`line ${l.id} was not recorded`);
      };
      await Promise.all(jobs.map((j, i) => run(j, i)));

      for (const b of bookings) {
        const after = await stored(b.id);
        expect(after.lines.every((l) => l.status === 'confirmed' || l.status === 'rejected')).toBe(true);
        expect(after.attempts).toHaveLength(7);
        expect(after.attempts.filter((t) => t.status === 'open')).toEqual([]);
        expect(after.events.filter((e) => e.action === 'line.attempt-started')).toHaveLength(7);
        await expectConsistent(b.id);
        // Every status change the booking went through is recorded once, in order.
        const changes = after.events
          .filter((e) => e.action === 'booking.status-changed')
          .map((e) => e.detail as { from: string; to: string });
        expect(changes[0]!.from).toBe('queued');
        expect(changes.at(-1)!.to).toBe(after.booking.status);
        for (let i = 1; i < changes.length; i++) expect(changes[i]!.from).toBe(changes[i - 1]!.to);
      }
    } finally {
      await pools[1]!.destroy();
    }
  });
});
