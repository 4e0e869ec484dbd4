import { createTestEnv, json, type TestApi, type TestEnv } from '../support/api';
import { launchPlan, lineOf, post, readBooking, type BookingBody } from '../support/bookings';
import { makeCreative } from '../support/creatives';
import { exposedCampaign, readCohort, syncAudience, type CohortBody } from '../audiences/support';
import { executeLineJob } from '../../shared/bookings/lines/flow';
import { executeReview } from '../../shared/creatives/review-execution';
import { executeAudienceSync } from '../../shared/audiences/sync-execution';
import type { BookingOutcome, ReviewOutcome } from '../../shared/adapters/adapter';
import type { AudienceSyncOutcome } from '../../shared/audiences/audience-supplier';
import { assignClient, grantStaff } from '../../shared/staff/staff-store';
import { engineOptions, heldAdapter, heldSupplier, jitter } from './support';

const EVIDENCE = 'The supplier desk cannot say whether the IO landed.';

let env: TestEnv;
let api: TestApi;
let operator: string;
let staff: string;
beforeAll(async () => {
  env = await createTestEnv();
  // No workers: every supplier call in this file is driven by hand, so its timing is the test's.
  api = await env.api();
  operator = await env.issuer.token({ org: 'org-a', user: 'op-a', permissions: ['operator:reconcile'] });
  await grantStaff(env.staff, 'staff-1');
  await assignClient(env.staff, 'staff-1', 'org-a');
  staff = await env.issuer.token({ org: 'staff-org', user: 'staff-1' });
});
afterAll(() => env.close());

type Line = BookingBody['lines'][number] & {
  attempts: Array<{ id: string; status: string; lateOutcome: unknown; providerReference: string | null }>;
};

/** A launched booking of `n` sandbox CTV lines whose jobs wait in their queue. */
async function booked(n: number) {
  const lines = Array.from({ length: n }, (_, i) => ({ channel: 'ctv', adapterKey: 'sandbox-ctv', budgetMinor: 10_000 + i * 100 }));
  return launchPlan(env, api, lines);
}

/** Starts the worker's side of one line by hand; resolves once the supplier has the request. */
async function inFlight(bookingId: string, lineId: string) {
  const held = heldSupplier<BookingOutcome>();
  const run = executeLineJob(env.db, heldAdapter(held), { bookingId, lineId }, engineOptions(env));
  await held.received;
  return { held, run };
}

const uncertain = (bookingId: string, line: { id: string; version: number }) =>
  post(api, operator, `/api/v1/operator/bookings/${bookingId}/lines/${line.id}/uncertain`, {
    expectedVersion: line.version,
    evidence: EVIDENCE,
  });

describe('a supplier answer that arrives after a person closed the attempt', () => {
  test('is kept on the attempt and in the booking events, shown to staff, and never moves the line', async () => {
    const { booking, token } = await booked(1);
    const lineId = booking.lines[0]!.id;
    const { held, run } = await inFlight(booking.id, lineId);
    const inProgress = lineOf<Line>(await readBooking(api, token, booking.id), lineId);
    expect(inProgress.status).toBe('in-progress');

    expect((await uncertain(booking.id, inProgress)).status).toBe(200);
    held.answer({ kind: 'confirmed', providerReference: 'sup-ref-123' });
    expect(await run).toBe('outcome-recorded-for-reconciliation');

    const after = await readBooking(api, token, booking.id);
    const line = lineOf<Line>(after, lineId);
    expect(line.status).toBe('reconciliation-required');
    expect(line.providerReference).toBeNull();
    expect(line.attempts).toEqual([
      expect.objectContaining({ status: 'unknown', lateOutcome: { kind: 'confirmed', providerReference: 'sup-ref-123' } }),
    ]);
    const late = after.events.filter((e) => e.action === 'line.late-supplier-answer');
    expect(late).toHaveLength(1);
    expect(late[0]).toMatchObject({
      lineId,
      actor: 'system',
      detail: { outcome: { kind: 'confirmed', providerReference: 'sup-ref-123' } },
    });
    expect(after.status).toBe('in-progress');

    // Staff see the same evidence in their queue, and settle the line from it.
    const queue = await json<{ bookings: BookingBody[] }>(
      await api.fetch('/api/v1/internal/fulfilment/bookings?status=all&limit=100', { token: staff }),
    );
    const staffLine = lineOf<Line>(
      queue.bookings.find((b) => b.id === booking.id)!,
      lineId,
    );
    expect(staffLine.attempts[0]!.lateOutcome).toEqual({ kind: 'confirmed', providerReference: 'sup-ref-123' });
    const resolved = await post(api, staff, `/api/v1/internal/fulfilment/bookings/${booking.id}/lines/${lineId}/resolve`, {
      expectedVersion: staffLine.version,
      outcome: 'applied',
      providerReference: 'sup-ref-123',
      evidence: 'The supplier answered late with reference sup-ref-123.',
    });
    expect(resolved.status).toBe(200);
    expect(lineOf<Line>((await json<{ booking: BookingBody }>(resolved)).booking, lineId).status).toBe('confirmed');
  });

  test('a creative review answered after a re-delivery took it over records no approval', async () => {
    const token = await env.issuer.token({ org: 'org-a', user: 'org-a-buyer' });
    const creative = await makeCreative(api, token, 'ctv');
    const submitted = await post(api, token, `/api/v1/creatives/${creative.id}/submit`, { adapterKey: 'sandbox-ctv' });
    const { review } = await json<{ review: { id: string } }>(submitted);

    const held = heldSupplier<ReviewOutcome>();
    const first = executeReview(env.db, { review: () => held.call() }, review.id, engineOptions(env));
    await held.received;
    // The job's lock was lost and it was delivered again: the second delivery must not send, and takes the review over.
    const never = heldSupplier<ReviewOutcome>();
    expect(await executeReview(env.db, { review: () => never.call() }, review.id, engineOptions(env))).toBe('needs-resolution');
    expect(never.calls).toBe(0);

    held.answer({ kind: 'approved', providerReference: 'rev-77' });
    expect(await first).toBe('outcome-recorded-for-resolution');
    expect(await env.db('creative_reviews').where({ id: review.id }).first('status')).toEqual({ status: 'needs-resolution' });
    expect(await env.db('creative_approvals').where({ creative_id: creative.id })).toHaveLength(0);
    const attempt = await env.db('supplier_attempts').where({ subject_kind: 'review', subject_id: review.id }).first();
    expect(attempt).toMatchObject({ status: 'unknown', late_outcome: { kind: 'approved', providerReference: 'rev-77' } });
  });

  test('an audience sync answered after a re-delivery took it over stays with the person resolving it', async () => {
    const workers = await env.workers();
    const { campaignId, token } = await exposedCampaign(env, api, { org: 'org-sync' });
    await workers.close();
    const { cohort, attempt } = await json<{ cohort: CohortBody; attempt: { id: string } }>(await syncAudience(api, token, campaignId));

    const held = heldSupplier<AudienceSyncOutcome>();
    const supplier = { adapterKey: 'sandbox-ctv', callsSupplier: true, sync: () => held.call() };
    const job = { cohortId: cohort.id, attemptId: attempt.id };
    const first = executeAudienceSync(env.db, () => supplier, job, engineOptions(env));
    await held.received;
    expect(await executeAudienceSync(env.db, () => supplier, job, engineOptions(env))).toBe('needs-resolution');
    expect(held.calls).toBe(1);

    held.answer({ kind: 'synced', providerReference: 'aud-9' });
    expect(await first).toBe('outcome-recorded-for-resolution');
    const read = await readCohort(api, token, cohort.id);
    expect(read.state).toBe('needs-resolution');
    expect(read.attempts[0]).toMatchObject({
      status: 'needs-resolution',
      detail: { lateOutcome: { kind: 'synced', providerReference: 'aud-9' } },
    });
    const ledger = await env.db('supplier_attempts').where({ subject_kind: 'sync', subject_id: attempt.id }).first();
    expect(ledger).toMatchObject({ status: 'unknown', late_outcome: { kind: 'synced', providerReference: 'aud-9' } });
  });
});

describe('a person and the worker deciding on the same line at once', () => {
  const LINES = 12;

  test('uncertain racing the supplier answer: exactly one wins, the other is evidence or a 409, never a deadlock', async () => {
    const { booking, token } = await booked(LINES);
    const started = await Promise.all(booking.lines.map((l) => inFlight(booking.id, l.id)));
    const lines = (await readBooking(api, token, booking.id)).lines;
    const results = await Promise.all(
      lines.map(async (line, i) => {
        const { held, run } = started[i]!;
        const [res, result] = await Promise.all([
          jitter(20).then(() => uncertain(booking.id, line)),
          jitter(20).then(() => (held.answer({ kind: 'confirmed', providerReference: `ref-${i}` }), run)),
        ]);
        return { lineId: line.id, status: res.status, body: await res.text(), result };
      }),
    );

    const after = await readBooking(api, token, booking.id);
    let personWon = 0;
    for (const r of results) {
      const line = lineOf<Line>(after, r.lineId);
      if (r.status === 200) {
        personWon++;
        expect(r.result).toBe('outcome-recorded-for-reconciliation');
        expect(line.status).toBe('reconciliation-required');
        expect(line.attempts[0]).toMatchObject({ status: 'unknown', lateOutcome: { kind: 'confirmed' } });
      } else {
        expect(r.status).toBe(409);
        expect(r.result).toBe('confirmed');
        expect(line.status).toBe('confirmed');
        expect(line.attempts[0]).toMatchObject({ status: 'confirmed', lateOutcome: null });
      }
    }
    expect(after.events.filter((e) => e.action === 'line.late-supplier-answer')).toHaveLength(personWon);
  });

  test('staff resolve racing a late supplier answer: the resolution stands and the answer is kept, never a deadlock', async () => {
    const { booking, token } = await booked(LINES);
    const started = await Promise.all(booking.lines.map((l) => inFlight(booking.id, l.id)));
    for (const line of (await readBooking(api, token, booking.id)).lines) expect((await uncertain(booking.id, line)).status).toBe(200);
    const lines = (await readBooking(api, token, booking.id)).lines;

    const results = await Promise.all(
      lines.map(async (line, i) => {
        const { held, run } = started[i]!;
        const resolve = () =>
          post(api, staff, `/api/v1/internal/fulfilment/bookings/${booking.id}/lines/${line.id}/resolve`, {
            expectedVersion: line.version,
            outcome: 'not-applied',
            evidence: 'The supplier confirmed in writing that nothing was booked.',
          });
        const [res, result] = await Promise.all([
          jitter(20).then(resolve),
          jitter(20).then(() => (held.answer({ kind: 'rejected', reason: 'No inventory.' }), run)),
        ]);
        // A refusal's problem body says why (a lock timeout, a deadlock), should this ever fail.
        const problem = res.status === 200 ? null : await res.text();
        return { lineId: line.id, status: res.status, problem, result };
      }),
    );

    const after = await readBooking(api, token, booking.id);
    for (const r of results) {
      expect({ status: r.status, problem: r.problem }).toEqual({ status: 200, problem: null });
      expect(r.result).toBe('outcome-recorded-for-reconciliation');
      const line = lineOf<Line>(after, r.lineId);
      expect(line.status).toBe('rejected');
      expect(line.attempts[0]!.lateOutcome).toEqual({ kind: 'rejected', reason: 'No inventory.' });
    }
    expect(after.status).toBe('rejected');
  });
});
