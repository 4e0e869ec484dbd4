import { Queue } from 'bullmq';
import { createTestEnv, type TestApi, type TestEnv } from '../support/api';
import { launchPlan, waitForBooking } from '../support/bookings';
import { makeCreative } from '../support/creatives';
import { runMaintenanceJob } from '../support/maintenance';
import { exposedCampaign, ledgerOf, syncAudience } from '../audiences/support';
import { requeueVanished, VANISHED_AFTER_MS } from '../../workers/requeue-vanished';
import { createLogger } from '../../shared/logger';
import type { RunningWorkers } from '../../workers/main';

let env: TestEnv;
let api: TestApi;
const queues = new Map<string, Queue>();
const queueFor = (name: string) => {
  if (!queues.has(name)) queues.set(name, new Queue(name, { connection: env.redis, prefix: env.prefix }));
  return queues.get(name)!;
};
const sweep = () => requeueVanished(env.db, queueFor, createLogger('silent'));
let suppliers: RunningWorkers;
beforeAll(async () => {
  env = await createTestEnv();
  api = await env.api();
  // Booking workers only: reviews, syncs and maintenance wait in their queues until a test starts them.
  suppliers = await env.workers({ WORKER_QUEUES: 'supplier.sandbox-ctv', OUTBOX_RELAY_INTERVAL_MS: '100' });
});
afterAll(async () => {
  await suppliers.close();
  await Promise.all([...queues.values()].map((q) => q.close()));
  await env.close();
});

const longAgo = () => new Date(Date.now() - VANISHED_AFTER_MS - 60_000);
async function until(what: string, check: () => Promise<boolean>) {
  for (const deadline = Date.now() + 25_000; !(await check()); await new Promise((r) => setTimeout(r, 100))) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
  }
}
/** Removes a job from Redis as a flush would: no failed entry is left behind. */
async function vanish(queue: string, jobId: string) {
  await until(`${jobId} to be queued`, async () => (await queueFor(queue).getJob(jobId)) !== undefined);
  expect(await queueFor(queue).remove(jobId)).toBe(1);
}

describe('supplier work whose job vanished from Redis', () => {
  test('a queued line is queued again and booked once; sent, recent and still-queued work is left alone', async () => {
    // Nothing consumes this adapter's queue yet, so the jobs wait where a flush can take them.
    const { booking, token } = await launchPlan(env, api, [
      { channel: 'dooh', adapterKey: 'sandbox-dooh', budgetMinor: 1_000 },
      { channel: 'dooh', adapterKey: 'sandbox-dooh', budgetMinor: 2_000 },
      { channel: 'dooh', adapterKey: 'sandbox-dooh', budgetMinor: 3_000 },
      { channel: 'dooh', adapterKey: 'sandbox-dooh', budgetMinor: 4_000 },
    ]);
    const [lost, sent, recent, waiting] = booking.lines.map((l) => l.id) as [string, string, string, string];
    const q = 'supplier.sandbox-dooh';
    for (const id of [lost, sent, recent]) await vanish(q, `book-line-${id}`);
    const waitingJob = await queueFor(q).getJob(`book-line-${waiting}`);
    // This one's attempt was opened (the supplier may have it) before its job went.
    await env.db('supplier_attempts').insert({
      id: 'att_sent-then-vanished',
      line_id: sent,
      booking_id: booking.id,
      adapter_key: 'sandbox-dooh',
      operation: 'book',
      status: 'open',
    });
    await env.db('booking_lines').where({ id: sent }).update({ status: 'in-progress', provider_attempt_id: 'att_sent-then-vanished' });
    await env.db('booking_lines').whereIn('id', [lost, sent, waiting]).update({ updated_at: longAgo() });
    await suppliers.relayNow();

    expect(await sweep()).toBe(1);
    await until('the lost line to be queued again', async () => (await queueFor(q).getJob(`book-line-${lost}`)) !== undefined);
    expect(await queueFor(q).getJob(`book-line-${sent}`)).toBeUndefined();
    expect(await queueFor(q).getJob(`book-line-${recent}`)).toBeUndefined();
    expect((await queueFor(q).getJob(`book-line-${waiting}`))!.timestamp).toBe(waitingJob!.timestamp);

    const dooh = await env.workers({ WORKER_QUEUES: q });
    const done = await waitForBooking(
      api,
      token,
      booking.id,
      (b) => b.lines[0]!.status === 'confirmed' && b.lines[3]!.status === 'confirmed',
    );
    await dooh.close();
    expect(done.lines.map((l) => l.status)).toEqual(['confirmed', 'in-progress', 'queued', 'confirmed']);
    const received = await Promise.all(
      [lost, sent, recent, waiting].map(async (id) => (await env.db('sandbox_ledger').where({ line_id: id })).length),
    );
    expect(received).toEqual([1, 0, 0, 1]);
    // Booked work is never queued again.
    expect(await sweep()).toBe(0);
  });

  test('a creative review and an audience sync whose jobs vanished are sent once each', async () => {
    const { campaignId, token } = await exposedCampaign(env, api, { org: 'org-sync' });
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
    expect(await runMaintenanceJob(env, 'retry-unsent')).toEqual({ retried: 0, requeued: 1 });
    const done = await waitForBooking(api, token, booking.id, (b) => b.status === 'confirmed');
    await maintenance.close();
    expect(await env.db('sandbox_ledger').where({ line_id: done.lines[0]!.id })).toHaveLength(1);
  });
});
