import { assignClient, grantStaff } from '../../shared/staff/staff-store';
import { Queue, Worker } from 'bullmq';
import { Redis } from 'ioredis';
import { createTestEnv, type TestApi, type TestEnv } from '../support/api';
import { TEST_REDIS_URL } from '../support/env';
import { launchPlan, readBooking, waitForBooking } from '../support/bookings';
import { runMaintenanceJob } from '../support/maintenance';
import { QueueProducers } from '../../shared/queues/producers';
import { queuePrefix } from '../../shared/queues/names';
import { createLogger } from '../../shared/logger';
import { retryUnsent } from '../../workers/retry-unsent';

let env: TestEnv;
let api: TestApi;
let connection: Redis;
beforeAll(async () => {
  env = await createTestEnv();
  api = await env.api();
  connection = new Redis(TEST_REDIS_URL, { maxRetriesPerRequest: null });
});
afterAll(async () => {
  connection.disconnect();
  await env.close();
});

/** A consumer that fails every job before doing anything, as a worker would during a database outage. */
async function failEverything(queue: string, jobs: number) {
  let failed = 0;
  const own = connection.duplicate();
  const done = new Promise<void>((resolve) => {
    const w = new Worker(
      queue,
      async () => {
        throw new Error('database unavailable');
      },
      { connection: own, prefix: queuePrefix(env.prefix, queue) },
    );
    w.on('failed', async () => {
      if (++failed === jobs) {
        await w.close();
        own.disconnect();
        resolve();
      }
    });
  });
  await done;
}

describe('supplier jobs that failed before sending anything', () => {
  test('are retried by maintenance and then book the line once; jobs that did send are left for reconciliation', async () => {
    const { booking, token } = await launchPlan(env, api, [
      { channel: 'ctv', adapterKey: 'sandbox-ctv', budgetMinor: 1_000 },
      { channel: 'ctv', adapterKey: 'sandbox-ctv', budgetMinor: 2_000 },
    ]);
    await failEverything('supplier.sandbox-ctv', 2);
    expect((await readBooking(api, token, booking.id)).lines.map((l) => l.status)).toEqual(['queued', 'queued']);
    // The second line's attempt was sent before its job failed: that one must never be retried.
    const sent = booking.lines[1]!.id;
    await env.db('supplier_attempts').insert({
      id: 'att_sent-before-failure',
      subject_kind: 'line',
      subject_id: sent,
      line_id: sent,
      booking_id: booking.id,
      adapter_key: 'sandbox-ctv',
      operation: 'book',
      status: 'open',
    });
    await env.db('booking_lines').where({ id: sent }).update({ status: 'in-progress', provider_attempt_id: 'att_sent-before-failure' });

    // Starting the workers registers the schedule, whose first run comes at once.
    const workers = await env.workers({ WORKER_QUEUES: 'maintenance,supplier.sandbox-ctv' });
    const done = await waitForBooking(api, token, booking.id, (b) => b.lines[0]!.status === 'confirmed');
    expect(done.lines[1]!.status).toBe('in-progress');
    expect(await env.db('sandbox_ledger').where({ line_id: booking.lines[0]!.id })).toHaveLength(1);
    expect(await env.db('sandbox_ledger').where({ line_id: sent })).toHaveLength(0);
    // Nothing is left to retry: the sent line's job stays failed, its line waits for reconciliation.
    expect(await runMaintenanceJob(env, 'retry-unsent')).toEqual({ retried: 0, requeued: 0 });
    const probe = new Queue('supplier.sandbox-ctv', { connection, prefix: queuePrefix(env.prefix, 'supplier.sandbox-ctv') });
    expect((await probe.getFailed()).map((j) => (j.data as { lineId: string }).lineId)).toEqual([sent]);
    await probe.close();
    await workers.close();
  });

  test('every failed job is found, however many pages of them there are, each retried once', async () => {
    const lines = Array.from({ length: 8 }, (_, i) => ({ channel: 'dooh', adapterKey: 'sandbox-dooh', budgetMinor: 1_000 + i * 100 }));
    const { booking, token } = await launchPlan(env, api, lines, 'org-pages');
    await failEverything('supplier.sandbox-dooh', 8);
    const producers = new QueueProducers(connection, env.prefix);
    // Pages of 3: a scan that retried as it read front to back would skip jobs as the list shrank.
    expect(await retryUnsent(env.db, producers.get, createLogger('silent'), { pageSize: 3 })).toBe(8);
    expect(await producers.get('supplier.sandbox-dooh').getFailedCount()).toBe(0);
    await producers.close();
    const workers = await env.workers({ WORKER_QUEUES: 'supplier.sandbox-dooh' });
    await waitForBooking(api, token, booking.id, (b) => b.lines.every((l) => l.status === 'confirmed'));
    await workers.close();
    for (const l of booking.lines) expect(await env.db('sandbox_ledger').where({ line_id: l.id })).toHaveLength(1);
  });
});

describe('browser jobs whose BullMQ job failed', () => {
  test('one whose row is still queued opened nothing and is retried; one that ran and failed is never retried', async () => {
    await grantStaff(env.staff, 'ru-staff');
    await assignClient(env.staff, 'ru-staff', 'org-ru');
    const staff = await env.issuer.token({ org: 'staff-org', user: 'ru-staff' });
    const l = await launchPlan(env, api, [{ channel: 'dooh', adapterKey: 'computer-use', budgetMinor: 5_000 }], 'org-ru');
    const ask = async () => {
      const res = await api.fetch(`/api/v1/internal/fulfilment/clients/org-ru/campaigns/${l.campaignId}/browser-jobs`, {
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
    const [unsent, ran] = [await ask(), await ask()];
    await failEverything('browser-jobs', 2);
    await env
      .db('browser_jobs')
      .where({ id: ran })
      .update({ status: 'failed', failure_code: 'timed_out', failure_reason: 'The job did not finish in time.' });
    const producers = new QueueProducers(connection, env.prefix);
    expect(await retryUnsent(env.db, producers.get, createLogger('silent'))).toBe(1);
    const queue = producers.get('browser-jobs');
    expect(await (await queue.getJob(`browser-job-${unsent}`))!.getState()).toBe('waiting');
    expect(await (await queue.getJob(`browser-job-${ran}`))!.getState()).toBe('failed');
    await producers.close();
  });
});
