import { createTestEnv, json, type TestApi, type TestEnv } from '../support/api';
import { launchPlan, lineOf, post, readBooking, waitForBooking, type BookingBody } from '../support/bookings';
import { makeCreative } from '../support/creatives';
import { completedRuns, runMaintenanceJob } from '../support/maintenance';
import { until } from '../support/wait';
import { exposedCampaign, readCohort, syncAudience, type CohortBody } from '../audiences/support';
import { QueueProducers } from '../../shared/queues/producers';
import { createLogger } from '../../shared/logger';
import { assignClient, grantStaff } from '../../shared/staff/staff-store';
import { STUCK_REASON } from '../../shared/suppliers/stuck-attempts';
import { sweepStuck } from '../../workers/sweep-stuck-attempts';
import { Redis } from 'ioredis';
import { TEST_REDIS_URL } from '../support/env';

let env: TestEnv;
let api: TestApi;
let connection: Redis;
let producers: QueueProducers;
beforeAll(async () => {
  env = await createTestEnv();
  api = await env.api();
  connection = new Redis(TEST_REDIS_URL, { maxRetriesPerRequest: null });
  producers = new QueueProducers(connection, env.prefix);
});
afterAll(async () => {
  await producers.close();
  connection.disconnect();
  await env.close();
});

async function jobState(queue: string, jobId: string) {
  const job = await producers.get(queue).getJob(jobId);
  return job ? job.getState() : 'missing';
}

/**
 * The outcome step fails for real after the supplier answered: the database refuses to close
 * any open attempt (as it would if it went away between the answer and the write).
 */
async function refuseOutcomeWrites(): Promise<() => Promise<void>> {
  await env.db.raw(`create or replace function refuse_outcome() returns trigger language plpgsql as $$
    begin raise exception 'outcome write refused'; end $$`);
  await env.db.raw(`create trigger refuse_outcome before update on supplier_attempts for each row
    when (old.status = 'open' and new.status <> 'open') execute function refuse_outcome()`);
  return async () => void (await env.db.raw('drop trigger refuse_outcome on supplier_attempts'));
}

const openAttempts = (kind: string) => env.db('supplier_attempts').where({ subject_kind: kind, status: 'open' });
const sweepConfig = { SUPPLIER_TIMEOUT_MS: '100', ATTEMPT_STUCK_GRACE_MS: '0', OUTBOX_RELAY_INTERVAL_MS: '50' };

/** Runs the sweep and returns how many attempts every sweep so far took over, the scheduled ones included. */
async function sweepAndCount(): Promise<number> {
  await runMaintenanceJob(env, 'sweep-stuck-attempts');
  return sweptSoFar();
}

async function sweptSoFar(): Promise<number> {
  return (await completedRuns<{ swept: number }>(env, 'sweep-stuck-attempts')).reduce((n, r) => n + r.swept, 0);
}

describe('an attempt stranded by a failed outcome write', () => {
  test('a booking line goes to reconciliation-required with the reason, and the supplier was called once', async () => {
    const allow = await refuseOutcomeWrites();
    const workers = await env.workers(sweepConfig);
    const { booking, token } = await launchPlan(env, api, [{ channel: 'ctv', adapterKey: 'sandbox-ctv', budgetMinor: 10_000 }]);
    const lineId = booking.lines[0]!.id;
    // The supplier answered (its ledger has the booking), the write failed, and the job failed with it.
    await until('the supplier has the booking', async () => (await env.db('sandbox_ledger').where({ line_id: lineId })).length === 1);
    await until('the job has failed', async () => (await jobState('supplier.sandbox-ctv', `book-line-${lineId}`)) === 'failed');
    expect(lineOf(await readBooking(api, token, booking.id), lineId).status).toBe('in-progress');
    await allow();

    expect(await sweepAndCount()).toBe(1);
    const after = await readBooking(api, token, booking.id);
    const line = lineOf(after, lineId);
    expect(line.status).toBe('reconciliation-required');
    expect(after.events.find((e) => e.lineId === lineId && e.action === 'line.reconciliation-required')?.detail).toMatchObject({
      reason: STUCK_REASON,
    });
    expect(await env.db('sandbox_ledger').where({ line_id: lineId })).toHaveLength(1);
    expect(await openAttempts('line').where({ line_id: lineId })).toHaveLength(0);
    // A second sweep finds nothing left to take.
    expect(await sweepAndCount()).toBe(1);
    await workers.close();
  });

  test('a creative review and an audience sync go to needs-resolution', async () => {
    const setup = await env.workers(sweepConfig);
    const { campaignId, token } = await exposedCampaign(env, api, { org: 'org-sync' });
    await setup.close();

    const before = await sweptSoFar();
    const allow = await refuseOutcomeWrites();
    const workers = await env.workers(sweepConfig);
    const creative = await makeCreative(api, token, 'ctv');
    const { review } = await json<{ review: { id: string } }>(
      await post(api, token, `/api/v1/creatives/${creative.id}/submit`, { adapterKey: 'sandbox-ctv' }),
    );
    const { cohort } = await json<{ cohort: CohortBody }>(await syncAudience(api, token, campaignId));
    await until(
      'both calls were made and their writes refused',
      async () =>
        (await openAttempts('review')).length + (await openAttempts('sync')).length === 2 &&
        (await env.db('sandbox_ledger').whereIn('operation', ['creative-review', 'audience-sync'])).length >= 2,
    );
    await workers.close();
    await allow();

    const sweeper = await env.workers(sweepConfig);
    expect(await sweepAndCount()).toBe(before + 2);
    await sweeper.close();
    expect(await env.db('creative_reviews').where({ id: review.id }).first('status', 'reasons')).toEqual({
      status: 'needs-resolution',
      reasons: [STUCK_REASON],
    });
    const read = await readCohort(api, token, cohort.id);
    expect(read.state).toBe('needs-resolution');
    expect(read.attempts[0]).toMatchObject({ status: 'needs-resolution', detail: { reason: STUCK_REASON, cause: 'stuck' } });
    expect(await env.db('creative_approvals').where({ creative_id: creative.id })).toHaveLength(0);
  });
});

describe('what the sweep leaves alone', () => {
  test('an attempt whose job is still running, and a staff member’s managed booking, however old', async () => {
    const workers = await env.workers({ SANDBOX_SLOW_MS: '3000', OUTBOX_RELAY_INTERVAL_MS: '50' });
    const { booking, token } = await launchPlan(
      env,
      api,
      [
        // …93: the sandbox supplier answers slowly, so its job stays active.
        { channel: 'ctv', adapterKey: 'sandbox-ctv', budgetMinor: 10_093 },
        { channel: 'ctv', adapterKey: 'manual', budgetMinor: 10_000 },
      ],
      'org-alone',
    );
    const [slow, manual] = booking.lines as [BookingBody['lines'][number], BookingBody['lines'][number]];
    const ready = await waitForBooking(
      api,
      token,
      booking.id,
      (b) => b.lines[0]!.status === 'in-progress' && Boolean(b.lines[1]!.workflowSteps),
    );

    await grantStaff(env.staff, 'staff-alone');
    await assignClient(env.staff, 'staff-alone', 'org-alone');
    const staff = await env.issuer.token({ org: 'staff-org', user: 'staff-alone' });
    const base = `/api/v1/internal/fulfilment/bookings/${booking.id}/lines/${manual.id}`;
    const claimed = await json<{ booking: BookingBody }>(
      await post(api, staff, `${base}/claim`, { expectedVersion: lineOf(ready, manual.id).version }),
    );
    const started = await post(api, staff, `${base}/start`, { expectedVersion: lineOf(claimed.booking, manual.id).version });
    expect(started.status).toBe(200);

    const anHourFromNow = new Date(Date.now() + 3_600_000);
    const config = { SUPPLIER_TIMEOUT_MS: 100, ATTEMPT_STUCK_GRACE_MS: 0 };
    expect(await sweepStuck(env.db, producers.get, createLogger('silent'), config, anHourFromNow)).toBe(0);

    const after = await readBooking(api, token, booking.id);
    expect(lineOf(after, slow.id).status).toBe('in-progress');
    expect(lineOf(after, manual.id).status).toBe('in-progress');
    expect(await openAttempts('line').whereIn('line_id', [slow.id, manual.id])).toHaveLength(2);
    await workers.close();
  });
});
