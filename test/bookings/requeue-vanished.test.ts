import { assignClient, grantStaff } from '../../shared/staff/staff-store';
import { Queue } from 'bullmq';
import { until } from '../support/wait';
import { createTestEnv, type TestApi, type TestEnv } from '../support/api';
import { launchPlan, waitForBooking } from '../support/bookings';
import { makeCreative } from '../support/creatives';
import { runMaintenanceJob } from '../support/maintenance';
import { exposedCampaign, ledgerOf, syncAudience } from '../audiences/support';
import { requeueVanished, VANISHED_AFTER_MS } from '../../workers/requeue-vanished';
import { createLogger } from '../../shared/logger';
import { queuePrefix } from '../../shared/queues/names';

let env: TestEnv;
let api: TestApi;
const queues = new Map<string, Queue>();
const queueFor = (name: string) => {
  if (!queues.has(name)) queues.set(name, new Queue(name, { connection: env.redis, prefix: queuePrefix(env.prefix, name) }));
  return queues.get(name)!;
};
// Pages of one, so every run also walks the paging.
const sweep = () => requeueVanished(env.db, queueFor, createLogger('silent'), { pageSize: 1 });
beforeAll(async () => {
  env = await createTestEnv();
  api = await env.api();
});
afterAll(async () => {
  await Promise.all([...queues.values()].map((q) => q.close()));
  await env.close();
});

const longAgo = () => new Date(Date.now() - VANISHED_AFTER_MS - 60_000);
async function openAttempt(bookingId: string, lineId: string, id: string) {
  await env.db('supplier_attempts').insert({
    id,
    subject_kind: 'line',
    subject_id: lineId,
    line_id: lineId,
    booking_id: bookingId,
    adapter_key: 'sandbox-dooh',
    operation: 'book',
    status: 'open',
  });
}
/** Removes a job from Redis as a flush would: no failed entry is left behind. */
async function vanish(queue: string, jobId: string) {
  await until(`${jobId} to be queued`, async () => (await queueFor(queue).getJob(jobId)) !== undefined);
  expect(await queueFor(queue).remove(jobId)).toBe(1);
}

describe('supplier work whose job vanished from Redis', () => {
  test('a queued line is queued again and booked once; sent, staffed, recent, relay-pending and still-queued work is left alone', async () => {
    // No worker or relay runs: the API's own relay put the jobs in Redis, where a flush can take them.
    const { booking, token } = await launchPlan(env, api, [
      { channel: 'dooh', adapterKey: 'sandbox-dooh', budgetMinor: 1_000 },
      { channel: 'dooh', adapterKey: 'sandbox-dooh', budgetMinor: 2_000 },
      { channel: 'dooh', adapterKey: 'sandbox-dooh', budgetMinor: 3_000 },
      { channel: 'dooh', adapterKey: 'sandbox-dooh', budgetMinor: 4_000 },
      { channel: 'dooh', adapterKey: 'sandbox-dooh', budgetMinor: 5_000 },
      { channel: 'dooh', adapterKey: 'sandbox-dooh', budgetMinor: 6_000 },
      { channel: 'tv', adapterKey: 'manual', budgetMinor: 7_000 },
    ]);
    const ids = booking.lines.map((l) => l.id);
    const [lost, sent, recent, waiting, attempted, pending, staffed] = ids as [string, string, string, string, string, string, string];
    const jobOf = (id: string) => `book-line-${id}`;
    const q = 'supplier.sandbox-dooh';
    for (const id of [lost, sent, recent, attempted, pending]) await vanish(q, jobOf(id));
    await vanish('supplier.manual', jobOf(staffed));
    const waitingJob = await queueFor(q).getJob(jobOf(waiting));
    // Its booking was sent (the supplier may have it) before its job went; the line moved on.
    await openAttempt(booking.id, sent, 'att_sent-then-vanished');
    await env.db('booking_lines').where({ id: sent }).update({ status: 'in-progress', provider_attempt_id: 'att_sent-then-vanished' });
    // Still queued, but an attempt is on record: something may have been sent.
    await openAttempt(booking.id, attempted, 'att_attempted');
    // Its outbox row has not been relayed (yet): the relay, not the sweep, will queue it.
    await env
      .db('outbox')
      .where({ job_id: jobOf(pending) })
      .update({ relayed_at: null });
    // Handed to staff with its booking steps: staff work it by hand, no job needed.
    await env
      .db('booking_lines')
      .where({ id: staffed })
      .update({ workflow_steps: JSON.stringify([{ step: 'Call the sales desk.' }]) });
    await env.db('booking_lines').whereNot({ id: recent }).whereIn('id', ids).update({ updated_at: longAgo() });

    expect(await sweep()).toBe(1);
    const pendingOutbox = await env.db('outbox').whereIn('job_id', ids.map(jobOf)).whereNull('relayed_at').pluck('job_id');
    expect(pendingOutbox.sort()).toEqual([jobOf(lost), jobOf(pending)].sort());
    expect((await queueFor(q).getJob(jobOf(waiting)))!.timestamp).toBe(waitingJob!.timestamp);
    // Until it is relayed, the lost line is not requeued twice.
    expect(await sweep()).toBe(0);

    const dooh = await env.workers({ WORKER_QUEUES: q, OUTBOX_RELAY_INTERVAL_MS: '100' });
    const done = await waitForBooking(api, token, booking.id, (b) => [0, 3, 5].every((i) => b.lines[i]!.status === 'confirmed'));
    await dooh.close();
    expect(done.lines.map((l) => l.status)).toEqual(['confirmed', 'in-progress', 'queued', 'confirmed', 'queued', 'confirmed', 'queued']);
    const received = await Promise.all(ids.map(async (id) => (await env.db('sandbox_ledger').where({ line_id: id })).length));
    expect(received).toEqual([1, 0, 0, 1, 0, 1, 0]);
    // Booked work is never queued again, and nothing else qualifies.
    expect(await sweep()).toBe(0);
    expect(await queueFor('supplier.manual').getJob(jobOf(staffed))).toBeUndefined();
  });

  test('a creative review and an audience sync whose jobs vanished are sent once each', async () => {
    const ctv = await env.workers({ WORKER_QUEUES: 'supplier.sandbox-ctv' });
    const { campaignId, token } = await exposedCampaign(env, api, { org: 'org-sync' });
    await ctv.close();
    const sync = await syncAudience(api, token, campaignId);
    expect(sync.status).toBe(202);
    const { attempt } = (await sync.json()) as { attempt: { id: string } };
    await vanish('audience-sync', `audience-sync-${attempt.id}`);

    const creative = await makeCreative(api, token, 'ctv');
    const submitted = await api.fetch(`/api/v1/creatives/${creative.id}/submit`, {
      method: 'POST',
      token,
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ adapterKey: 'sandbox-ctv' }),
    });
    expect(submitted.status).toBe(202);
    const { review } = (await submitted.json()) as { review: { id: string } };
    await vanish('creative-review.sandbox-ctv', `creative-review-${review.id}`);

    // Too recent: a job may simply be late. Old enough: it is taken to be lost.
    expect(await sweep()).toBe(0);
    await env.db('cohort_sync_attempts').where({ id: attempt.id }).update({ created_at: longAgo() });
    await env.db('creative_reviews').where({ id: review.id }).update({ created_at: longAgo() });
    expect(await sweep()).toBe(2);

    const workers = await env.workers({ WORKER_QUEUES: 'audience-sync,creative-review.sandbox-ctv' });
    await until('the sync and the review to finish', async () => {
      const a = await env.db('cohort_sync_attempts').where({ id: attempt.id }).first('status');
      const r = await env.db('creative_reviews').where({ id: review.id }).first('status');
      return a.status === 'synced' && r.status === 'approved';
    });
    await workers.close();
    expect(await ledgerOf(env, attempt.id)).toHaveLength(1);
    const reviewsSent = await env
      .db('sandbox_ledger')
      .where({ operation: 'creative-review' })
      .whereRaw("request->>'creativeId' = ?", [creative.id]);
    expect(reviewsSent).toHaveLength(1);
    expect(await sweep()).toBe(0);
  });

  test('the scheduled retry-unsent maintenance job runs the sweep', async () => {
    const { booking, token } = await launchPlan(
      env,
      api,
      [{ channel: 'social', adapterKey: 'sandbox-social', budgetMinor: 5_000 }],
      'org-m',
    );
    const lineId = booking.lines[0]!.id;
    await vanish('supplier.sandbox-social', `book-line-${lineId}`);
    const maintenance = await env.workers({ WORKER_QUEUES: 'maintenance,supplier.sandbox-social' });
    // Any scheduled run that starting the workers set off has finished before this one ends.
    await runMaintenanceJob(env, 'retry-unsent');
    expect((await env.db('booking_lines').where({ id: lineId }).first()).status).toBe('queued');
    await env.db('booking_lines').where({ id: lineId }).update({ updated_at: longAgo() });
    // A scheduled run may get there first; either way the line is booked, and once.
    expect(await runMaintenanceJob(env, 'retry-unsent')).toEqual({ retried: 0, requeued: expect.any(Number) });
    const done = await waitForBooking(api, token, booking.id, (b) => b.status === 'confirmed');
    await maintenance.close();
    expect(await env.db('sandbox_ledger').where({ line_id: done.lines[0]!.id })).toHaveLength(1);
  });
});

describe('a browser job whose job vanished from Redis', () => {
  test('still queued, it is queued again once; one that already ended is left alone', async () => {
    await grantStaff(env.staff, 'rv-staff');
    await assignClient(env.staff, 'rv-staff', 'org-rv');
    const staff = await env.issuer.token({ org: 'staff-org', user: 'rv-staff' });
    const l = await launchPlan(env, api, [{ channel: 'dooh', adapterKey: 'computer-use', budgetMinor: 5_000 }], 'org-rv');
    const ask = async () => {
      const res = await api.fetch(`/api/v1/internal/fulfilment/clients/org-rv/campaigns/${l.campaignId}/browser-jobs`, {
        method: 'POST',
        token: staff,
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          channelCampaignId: l.booking.lines[0]!.channelCampaignId,
          purpose: 'observe',
          supplierUrl: 'https://sandbox-suppliers.flightdeck.dev/dooh',
          expectedSnapshotDigest: l.booking.snapshotDigest,
          readOnlyConfirmed: true,
        }),
      });
      expect(res.status).toBe(202);
      return ((await res.json()) as { browserJob: { id: string } }).browserJob.id;
    };
    const [lost, ended] = [await ask(), await ask()];
    const jobOf = (id: string) => `browser-job-${id}`;
    for (const id of [lost, ended]) await vanish('browser-jobs', jobOf(id));
    await env
      .db('browser_jobs')
      .where({ id: ended })
      .update({ status: 'failed', failure_code: 'timed_out', failure_reason: 'The job did not finish in time.' });
    expect(await sweep()).toBe(0);
    await env.db('browser_jobs').whereIn('id', [lost, ended]).update({ created_at: longAgo() });
    expect(await sweep()).toBe(1);
    const reopened = await env
      .db('outbox')
      .whereIn('job_id', [jobOf(lost), jobOf(ended)])
      .whereNull('relayed_at')
      .pluck('job_id');
    expect(reopened).toEqual([jobOf(lost)]);
    expect(await sweep()).toBe(0);
  });
});
