import { createTestEnv, type TestApi, type TestEnv } from '../support/api';
import { launchPlan, readBooking, waitForBooking } from '../support/bookings';

let env: TestEnv;
let api: TestApi;
beforeAll(async () => {
  env = await createTestEnv();
  api = await env.api();
});
afterAll(() => env.close());

const ledgerFor = (lineId: string) => env.db('sandbox_ledger').where({ line_id: lineId });
const statusOf = (b: { lines: Array<{ channel: string; status: string }> }) =>
  Object.fromEntries(b.lines.map((l) => [l.channel, l.status]));

describe('sandbox supplier triggers', () => {
  test('…91 rejects, …92 loses the answer (reconciliation-required), …93 is slow then confirms, anything else confirms; each received exactly once', async () => {
    const workers = await env.workers({ SANDBOX_SLOW_MS: '5000' });
    const { booking, token } = await launchPlan(env, api, [
      { channel: 'ctv', adapterKey: 'sandbox-ctv', budgetMinor: 10_000 },
      { channel: 'audio', adapterKey: 'sandbox-audio', budgetMinor: 10_091 },
      { channel: 'tv', adapterKey: 'sandbox-tv', budgetMinor: 10_092 },
      { channel: 'cinema', adapterKey: 'sandbox-cinema', budgetMinor: 10_093 },
    ]);
    // While the slow supplier thinks, its line is in progress with its attempt already committed.
    const during = await waitForBooking(api, token, booking.id, (b) => statusOf(b).cinema === 'in-progress');
    expect(during.lines.find((l) => l.channel === 'cinema')!.providerAttemptId).toMatch(/^att_/);
    const done = await waitForBooking(
      api,
      token,
      booking.id,
      (b) => statusOf(b).cinema === 'confirmed' && statusOf(b).tv === 'reconciliation-required',
    );
    expect(statusOf(done)).toEqual({ ctv: 'confirmed', audio: 'rejected', tv: 'reconciliation-required', cinema: 'confirmed' });
    // Reconciliation is still open work, so the booking is in progress.
    expect(done.status).toBe('in-progress');
    expect(done.lines.find((l) => l.channel === 'audio')!.evidence).toMatch(/refused/);
    for (const line of done.lines) {
      const ledger = await ledgerFor(line.id);
      expect(ledger).toHaveLength(1);
      expect(ledger[0].idempotency_key).toBe(line.providerAttemptId);
    }
    const unknown = done.events.find((e) => e.action === 'line.reconciliation-required');
    expect(unknown?.detail).toMatchObject({ to: 'reconciliation-required' });
    await workers.close();
  });

  test('confirmed and rejected lines make a partially-confirmed booking; all rejected makes a rejected one', async () => {
    const workers = await env.workers();
    const mixed = await launchPlan(env, api, [
      { channel: 'ctv', adapterKey: 'sandbox-ctv', budgetMinor: 2_000 },
      { channel: 'dooh', adapterKey: 'sandbox-dooh', budgetMinor: 2_091 },
    ]);
    await waitForBooking(api, mixed.token, mixed.booking.id, (b) => b.status === 'partially-confirmed');
    const refused = await launchPlan(env, api, [{ channel: 'ctv', adapterKey: 'sandbox-ctv', budgetMinor: 191 }]);
    await waitForBooking(api, refused.token, refused.booking.id, (b) => b.status === 'rejected');
    await workers.close();
  });

  test('a supplier that does not answer in time leaves the line for reconciliation, never for a second call', async () => {
    const workers = await env.workers({ SANDBOX_SLOW_MS: '3000', SUPPLIER_TIMEOUT_MS: '200' });
    const { booking, token } = await launchPlan(env, api, [{ channel: 'search', adapterKey: 'sandbox-search', budgetMinor: 5_093 }]);
    const done = await waitForBooking(api, token, booking.id, (b) => b.lines[0]!.status === 'reconciliation-required');
    expect(done.events.find((e) => e.action === 'line.reconciliation-required')?.detail).toMatchObject({
      reason: expect.stringMatching(/no answer within 200 ms/),
    });
    await workers.close();
    expect(await ledgerFor(done.lines[0]!.id)).toHaveLength(1);
    const attempt = await env.db('supplier_attempts').where({ line_id: done.lines[0]!.id }).first();
    expect(attempt.status).toBe('unknown');
  });
});

describe('workflow and staged suppliers', () => {
  test('manual and computer-use lines return booking steps and wait in the staff queue', async () => {
    const workers = await env.workers();
    const { booking, token } = await launchPlan(env, api, [
      { channel: 'tv', adapterKey: 'manual', budgetMinor: 3_000 },
      { channel: 'cinema', adapterKey: 'computer-use', budgetMinor: 3_000 },
    ]);
    const done = await waitForBooking(api, token, booking.id, (b) =>
      b.lines.every((l) => Array.isArray((l as { workflowSteps?: unknown }).workflowSteps)),
    );
    expect(done.lines.map((l) => [l.status, l.executionMethod])).toEqual([
      ['queued', 'manual'],
      ['queued', 'computer-use'],
    ]);
    expect(done.status).toBe('queued');
    expect(done.events.filter((e) => e.action === 'line.awaiting-staff')).toHaveLength(2);
    expect(
      await env.db('supplier_attempts').whereIn(
        'line_id',
        done.lines.map((l) => l.id),
      ),
    ).toHaveLength(0);
    await workers.close();
  });

  test('a native staged line is created paused and stays stopped, not enableable, after launch', async () => {
    const workers = await env.workers();
    const { booking, token } = await launchPlan(env, api, [{ channel: 'social', adapterKey: 'native-staged', budgetMinor: 4_000 }]);
    const done = await waitForBooking(api, token, booking.id, (b) => b.lines[0]!.status === 'stopped');
    expect(done.status).toBe('stopped');
    expect(done.lines[0]).toMatchObject({ enableable: false, providerReference: expect.stringMatching(/^staged-/) });
    const [op] = await ledgerFor(done.lines[0]!.id);
    expect(op.operation).toBe('create-paused');
    await workers.close();
  });
});

describe('worker processes', () => {
  test('WORKER_QUEUES limits a worker to its queues: other suppliers wait for their own workers', async () => {
    const workers = await env.workers({ WORKER_QUEUES: 'supplier.sandbox-ctv' });
    const { booking, token } = await launchPlan(env, api, [
      { channel: 'ctv', adapterKey: 'sandbox-ctv', budgetMinor: 1_000 },
      { channel: 'audio', adapterKey: 'sandbox-audio', budgetMinor: 1_000 },
    ]);
    const done = await waitForBooking(api, token, booking.id, (b) => b.lines[0]!.status === 'confirmed');
    expect(done.lines[1]!.status).toBe('queued');
    await workers.close();
    const other = await env.workers({ WORKER_QUEUES: 'supplier.sandbox-audio' });
    await waitForBooking(api, token, booking.id, (b) => b.status === 'confirmed');
    await other.close();
  });

  test('per-adapter concurrency and rate limits come from configuration', async () => {
    const workers = await env.workers({
      WORKER_QUEUES: 'supplier.sandbox-ctv,supplier.sandbox-tv',
      ADAPTER_CONCURRENCY: '3',
      ADAPTER_SETTINGS: JSON.stringify({ 'sandbox-tv': { concurrency: 1, rateMax: 10, rateDurationMs: 1000 } }),
    });
    expect(workers.consumers()).toEqual([
      { queue: 'supplier.sandbox-ctv', concurrency: 3, limiter: null },
      { queue: 'supplier.sandbox-tv', concurrency: 1, limiter: { max: 10, duration: 1000 } },
    ]);
    await workers.close();
  });

  test('graceful shutdown finishes an in-flight supplier operation instead of abandoning it', async () => {
    const workers = await env.workers({ SANDBOX_SLOW_MS: '5000' });
    const { booking, token } = await launchPlan(env, api, [{ channel: 'tv', adapterKey: 'sandbox-tv', budgetMinor: 7_093 }]);
    await waitForBooking(api, token, booking.id, (b) => b.lines[0]!.status === 'in-progress');
    await workers.close();
    const after = await readBooking(api, token, booking.id);
    expect(after.lines[0]!.status).toBe('confirmed');
  });
});
