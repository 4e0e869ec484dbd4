import { POLL_DELIVERY } from '../../shared/queues/jobs';
import { Queue } from 'bullmq';
import { until } from '../support/wait';
import { createTestEnv, type TestApi, type TestEnv } from '../support/api';
import { TEST_REDIS_URL } from '../support/env';
import { cleanEnv, startScript } from '../support/processes';
import { approve, draftCampaign, readBooking, sevenSandboxLines, waitForBooking } from '../support/bookings';
import { launchCampaign } from '../../shared/bookings/launch';
import { queuePrefix } from '../../shared/queues/names';
import { principalFromClaims } from '../../shared/auth/principal';
import { SPENDER_PERMISSIONS } from '../support/issuer';

let env: TestEnv;
let api: TestApi;
beforeAll(async () => {
  env = await createTestEnv();
  api = await env.api();
});
afterAll(() => env.close());

describe('a worker killed mid-operation', () => {
  test('after a restart the line is reconciliation-required and the supplier saw the operation once', async () => {
    const workerEnv = cleanEnv({
      DATABASE_URL: env.database.url,
      REDIS_URL: TEST_REDIS_URL,
      REDIS_PREFIX: env.prefix,
      WORKER_QUEUES: 'supplier.sandbox-ctv',
      SANDBOX_SLOW_MS: '60000',
      // Long enough that a busy machine never lets the live worker's own lock lapse before the kill.
      WORKER_LOCK_DURATION_MS: '5000',
      WORKER_STALLED_INTERVAL_MS: '1000',
      OUTBOX_RELAY_INTERVAL_MS: '200',
      DATA_DIR: env.dataDir,
    });
    const first = startScript('bin/worker.ts', workerEnv);
    const token = await env.issuer.token({ org: 'org-crash', user: 'buyer' });
    const { campaignId, planVersion } = await draftCampaign(api, token, [
      { channel: 'ctv', adapterKey: 'sandbox-ctv', budgetMinor: 8_093 },
    ]);
    await approve(api, token, campaignId, planVersion);
    const launched = await api.fetch(`/api/v1/campaigns/${campaignId}/launch`, { method: 'POST', token });
    const { booking } = (await launched.json()) as { booking: { id: string; lines: Array<{ id: string }> } };
    const lineId = booking.lines[0]!.id;

    // The supplier has received the booking and is "thinking" when the worker dies.
    await until(
      'the supplier to receive the operation',
      async () => (await env.db('sandbox_ledger').where({ line_id: lineId })).length === 1,
      30_000,
    );
    first.child.kill('SIGKILL');
    await first.stop();
    expect((await readBooking(api, token, booking.id)).lines[0]!.status).toBe('in-progress');

    const second = startScript('bin/worker.ts', workerEnv);
    try {
      const after = await waitForBooking(api, token, booking.id, (b) => b.lines[0]!.status === 'reconciliation-required', 30_000);
      expect(after.events.find((e) => e.action === 'line.reconciliation-required')?.detail).toMatchObject({
        attemptId: after.lines[0]!.providerAttemptId,
      });
      expect(await env.db('sandbox_ledger').where({ line_id: lineId })).toHaveLength(1);
      expect(await env.db('supplier_attempts').where({ line_id: lineId }).pluck('status')).toEqual(['unknown']);
    } finally {
      await second.stop();
    }
  }, 120_000);
});

describe('a crash between commit and enqueue', () => {
  test('loses nothing: the workers relay the committed work, and a second relay of the same rows duplicates nothing', async () => {
    const token = await env.issuer.token({ org: 'org-outbox', user: 'buyer' });
    const { campaignId, planVersion } = await draftCampaign(api, token, sevenSandboxLines());
    await approve(api, token, campaignId, planVersion);
    // Launch through the domain call alone: the booking and its outbox rows commit, and then
    // this "process" stops before it relays anything, as a crash right after commit would.
    const principal = principalFromClaims({ sub: 'buyer', org_id: 'org-outbox', permissions: SPENDER_PERMISSIONS, product: 'flightdeck' });
    const { booking } = await launchCampaign(env.db, principal, { actorId: 'buyer', actor: 'human', source: 'web' }, campaignId, {
      confirmationSlaHours: 48,
    });
    const pending = await env
      .db('outbox')
      .whereNull('relayed_at')
      .whereIn(
        'job_id',
        booking.lines.map((l) => `book-line-${l.id}`),
      );
    expect(pending).toHaveLength(7);
    expect(
      await env.db('sandbox_ledger').whereIn(
        'line_id',
        booking.lines.map((l) => l.id),
      ),
    ).toHaveLength(0);

    const workers = await env.workers({ OUTBOX_RELAY_INTERVAL_MS: '100' });
    const done = await waitForBooking(api, token, booking.id, (b) => b.status === 'confirmed');
    const queues = new Map(
      done.lines.map((l) => [
        l.id,
        new Queue(`supplier.${l.adapterKey}`, { connection: env.redis, prefix: queuePrefix(env.prefix, `supplier.${l.adapterKey}`) }),
      ]),
    );
    const finishedOn = async () =>
      Promise.all(done.lines.map(async (l) => (await queues.get(l.id)!.getJob(`book-line-${l.id}`))?.finishedOn ?? null));
    // The booking is confirmed a moment before BullMQ marks the last job completed.
    await until('every job to be marked completed', async () => (await finishedOn()).every((t) => typeof t === 'number'));
    const finishedBefore = await finishedOn();
    // Relay the very same rows again, as a relay that crashed before marking them would.
    await env
      .db('outbox')
      .whereIn(
        'job_id',
        booking.lines.map((l) => `book-line-${l.id}`),
      )
      .update({ relayed_at: null });
    // The scheduled relay may take them before this call does; either way all seven go again.
    await workers.relayNow();
    await until(
      'the rows to be relayed again',
      async () =>
        (
          await env
            .db('outbox')
            .whereIn(
              'job_id',
              booking.lines.map((l) => `book-line-${l.id}`),
            )
            .whereNull('relayed_at')
        ).length === 0,
    );
    // Each job is still the one that completed before: the re-relay added nothing to run.
    try {
      expect(await finishedOn()).toEqual(finishedBefore);
      // Nothing left to run but each supplier queue's scheduled delivery poll.
      for (const q of queues.values()) {
        const left = await q.getJobs(['waiting', 'active', 'delayed', 'prioritized']);
        expect(left.filter((j) => j.name !== POLL_DELIVERY).map((j) => j.name)).toEqual([]);
      }
    } finally {
      await Promise.all([...queues.values()].map((q) => q.close()));
    }
    await workers.close();
    expect(
      await env.db('sandbox_ledger').whereIn(
        'line_id',
        done.lines.map((l) => l.id),
      ),
    ).toHaveLength(7);
    const again = await readBooking(api, token, booking.id);
    expect(again.version).toBe(done.version);
  });
});
