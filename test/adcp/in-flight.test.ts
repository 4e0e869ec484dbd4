import { sellersAt } from '../support/adcp-env';
import { randomUUID } from 'node:crypto';
import { createTestEnv, json, type TestApi, type TestEnv } from '../support/api';
import { post, type BookingBody } from '../support/bookings';
import { until } from '../support/wait';
import { launchOnSeller } from '../support/adcp-buy';
import { productRef, startTestSeller, type TestSeller } from '../support/adcp-test-seller';
import { AdcpSellerConnection } from '../../shared/adapters/adcp/connection';
import { UnknownOutcome, type LineAtSupplier } from '../../shared/adapters/adapter';
import type { TaskResult } from '@adcp/sdk';
import { adcpOperations } from '../../workers/adapters/adcp/in-flight';
import { driftOf } from '../../shared/adapters/adcp/read-back';
import { adcpReporter } from '../../workers/adapters/adcp/delivery';
import { parseAdcpReference } from '../../shared/adapters/adcp/outcomes';
import type { RunningWorkers } from '../../workers/main';

let seller: TestSeller;
let env: TestEnv;
let api: TestApi;
let workers: RunningWorkers;
let connection: AdcpSellerConnection;

const PRODUCT = productRef('ctv_sync');

beforeAll(async () => {
  seller = await startTestSeller();
  env = await createTestEnv();
  const sellers = sellersAt({ spot: seller.agentUrl });
  api = await env.api({ ADCP_SELLERS: sellers });
  workers = await env.workers({ ADCP_SELLERS: sellers, WORKER_QUEUES: 'supplier.adcp-spot' });
  connection = new AdcpSellerConnection(
    { key: 'spot', agentUrl: seller.agentUrl, credentialEnv: 'FLIGHTDECK_TEST_ADCP_TOKEN', channels: ['ctv'], sandbox: false },
    { capabilitiesTtlMs: 60_000 },
  );
}, 60_000);
afterAll(async () => {
  await workers?.close();
  await env?.close();
  await seller?.stop();
  // This test's own connection to the seller.
  await connection?.close();
});

async function readBooking(token: string, id: string) {
  const res = await api.fetch(`/api/v1/bookings/${id}`, { token });
  return res.status === 200 ? (await json<{ booking: BookingBody }>(res)).booking : null;
}

/** A live line booked on the seller, as the engine booked it. */
async function bookedLine(org: string) {
  // Room above the budget: the budget change below raises the line within the maximum commitment.
  const { token, booking } = await launchOnSeller(env, api, org, 'adcp-spot', PRODUCT, { maximumCommitmentMinor: 200_000 });
  let current: BookingBody | null = null;
  await until('the line is confirmed', async () => {
    current = await readBooking(token, booking.id);
    return current?.lines[0]?.status === 'confirmed';
  });
  return { token, booking: current! };
}

const atSupplier = (b: BookingBody): LineAtSupplier => ({
  bookingId: b.id,
  lineId: b.lines[0]!.id,
  channel: 'ctv',
  executionMode: 'live',
  channelCampaignId: b.lines[0]!.channelCampaignId,
  providerReference: b.lines[0]!.providerReference,
  bookingAttemptId: b.lines[0]!.providerAttemptId,
  budgetMinor: 100_000,
  startDate: '2099-03-01',
  endDate: '2099-03-31',
});

describe('in flight on an AdCP seller', () => {
  test('pausing a line through the API is update_media_buy on its buy; the read-back is kept with the outcome', async () => {
    const { token, booking } = await bookedLine('org-f1');
    const line = booking.lines[0]!;
    const res = await post(api, token, `/api/v1/bookings/${booking.id}/lines/${line.id}/pause`, { expectedVersion: line.version });
    expect(res.status).toBe(202);
    let after: BookingBody | null = null;
    await until('the pause is settled', async () => {
      after = await readBooking(token, booking.id);
      return after?.lines[0]?.status === 'stopped';
    });
    // The pause's attempt keeps the seller's answer and the read-back of the buy, with any drift.
    const event = after!.events.find((e) => e.lineId === line.id && e.action === 'line.paused');
    const attempt = await env.db('supplier_attempts').where({ id: event!.detail!.attemptId }).first();
    expect(attempt).toMatchObject({ operation: 'pause', status: 'applied' });
    expect(attempt.detail).toMatchObject({ kind: 'applied', detail: { readBack: expect.any(Object), drift: expect.any(Array) } });
  }, 60_000);

  test('resume and a budget change through the API are applied at the seller, and its read-back agrees', async () => {
    const { token, booking } = await bookedLine('org-f5');
    const line = booking.lines[0]!;
    const { mediaBuyId } = parseAdcpReference(line.providerReference!);
    expect(
      (await post(api, token, `/api/v1/bookings/${booking.id}/lines/${line.id}/pause`, { expectedVersion: line.version })).status,
    ).toBe(202);
    let after: BookingBody | null = null;
    await until('the pause is settled', async () => {
      after = await readBooking(token, booking.id);
      return after?.lines[0]?.status === 'stopped';
    });
    expect(seller.buys.get(mediaBuyId)!.status).toBe('paused');
    const paused = after!.lines[0]!;
    const resumed = await post(api, token, `/api/v1/bookings/${booking.id}/lines/${line.id}/resume`, { expectedVersion: paused.version });
    expect(resumed.status).toBe(202);
    await until('the resume is settled', async () => {
      after = await readBooking(token, booking.id);
      return after?.lines[0]?.status === 'confirmed';
    });
    // The seller runs the buy again: its own state says so, not just its answer.
    expect(seller.buys.get(mediaBuyId)).toMatchObject({ status: 'active', packages: [expect.objectContaining({ paused: false })] });
    const amended = await api.fetch(`/api/v1/campaigns/${after!.campaignId}/amendments`, {
      method: 'POST',
      token,
      headers: { 'content-type': 'application/json', 'idempotency-key': randomUUID() },
      body: JSON.stringify({ expectedVersion: after!.version, lines: [{ lineId: line.id, budgetMinor: 150_000 }] }),
    });
    expect(amended.status).toBe(202);
    await until('the budget change is settled', async () => {
      const change = await env.db('supplier_attempts').where({ line_id: line.id, operation: 'change-budget' }).first();
      return change?.status === 'applied';
    });
    expect(seller.buys.get(mediaBuyId)!.packages[0]!.budget).toBe(1500);
    const update = seller.updates.filter((u) => u.mediaBuyId === mediaBuyId).at(-1)!;
    expect(update.patch.packages).toEqual([expect.objectContaining({ budget: 1500 })]);
    const attempt = await env.db('supplier_attempts').where({ line_id: line.id, operation: 'change-budget' }).first();
    expect(attempt.detail).toMatchObject({ kind: 'applied', detail: { readBack: { budget: 1500 }, drift: [] } });
  }, 90_000);

  test('a change answered submitted with a task is pending on that task; without one (or asking for input) it is unknown', async () => {
    const { booking } = await bookedLine('org-f9');
    // The seller's answer alone is replaced: it says it is still working on the change.
    let answer: Record<string, unknown> = { success: false, status: 'submitted', submitted: { taskId: 'task_upd_7' }, metadata: {} };
    class StillWorking extends AdcpSellerConnection {
      override async call<T>(): Promise<TaskResult<T>> {
        return answer as never;
      }
    }
    const ops = adcpOperations(new StillWorking(connection.seller, { capabilitiesTtlMs: 60_000 }));
    const ask = () => ops.pause({ ...atSupplier(booking), attemptId: `att_${randomUUID()}` }, { db: env.db, sandboxSlowMs: 0 });
    await expect(ask()).resolves.toEqual({ kind: 'pending', taskId: 'task_upd_7', supplierStatus: 'submitted' });
    answer = { success: false, status: 'working', metadata: {} };
    await expect(ask()).rejects.toThrow(UnknownOutcome);
    await expect(ask()).rejects.toThrow(/answered the pause working with no task to follow/);
    answer = { success: false, status: 'input-required', metadata: { serverTaskId: 'task_upd_8' } };
    await expect(ask()).rejects.toThrow(/answered the pause input-required \(its task task_upd_8\)/);
  }, 60_000);

  test('a change the seller answers but does not apply is flagged as drift by the read-back', async () => {
    const { booking } = await bookedLine('org-f2');
    const ops = adcpOperations(connection);
    const ctx = { db: env.db, sandboxSlowMs: 0 };
    const base = atSupplier(booking);
    const applied = await ops['change-budget']({ ...base, attemptId: `att_${randomUUID()}`, newBudgetMinor: 150_000 }, ctx);
    expect(applied).toMatchObject({ kind: 'applied', detail: { readBack: { budget: 1500 }, drift: [] } });
    // Now the seller answers success but keeps the old state: that is drift, named for a person.
    seller.drift = true;
    try {
      const drifted = await ops['change-budget']({ ...base, attemptId: `att_${randomUUID()}`, newBudgetMinor: 200_000 }, ctx);
      expect(drifted).toMatchObject({
        kind: 'applied',
        detail: { readBack: { budget: 1500 }, drift: ['asked for a budget of 2000; the seller shows 1500'] },
      });
      const stopped = await ops.stop({ ...base, attemptId: `att_${randomUUID()}` }, ctx);
      expect(stopped).toMatchObject({ kind: 'applied', detail: { drift: ['asked to stop; the seller shows pending_creatives'] } });
    } finally {
      seller.drift = false;
    }
    const stopped = await ops.stop({ ...base, attemptId: `att_${randomUUID()}` }, ctx);
    expect(stopped).toMatchObject({ kind: 'applied', detail: { readBack: { status: 'canceled' }, drift: [] } });
  }, 60_000);

  test('drift is named for each operation whose read-back disagrees', () => {
    const r = {
      ...atSupplier({ id: 'b', lines: [{ id: 'l', channelCampaignId: 'c', providerReference: 'm/p', providerAttemptId: 'a' }] } as never),
      attemptId: 'x',
    };
    expect(driftOf('pause', r, { status: 'active', paused: false, budget: 1 })).toHaveLength(1);
    expect(driftOf('pause', r, { status: 'active', paused: true, budget: 1 })).toEqual([]);
    expect(driftOf('resume', r, { status: 'paused', paused: null, budget: 1 })).toHaveLength(1);
    expect(driftOf('stop', r, { status: 'active', paused: null, budget: 1 })).toHaveLength(1);
    expect(driftOf('change-budget', { ...r, newBudgetMinor: 12_345 } as never, { status: 'active', paused: null, budget: 123.45 })).toEqual(
      [],
    );
  });

  test("delivery is the seller's daily figures for the line's package, in minor units; a restated day is read as restated", async () => {
    const { booking } = await bookedLine('org-f3');
    const { mediaBuyId } = parseAdcpReference(booking.lines[0]!.providerReference!);
    seller.delivery.set(mediaBuyId, [
      { date: '2099-03-01', impressions: 1000, spend: 12.34 },
      { date: '2099-03-02', impressions: 2000, spend: 24.5 },
      { date: '2099-04-02', impressions: 9, spend: 1 },
    ]);
    const read = () => adcpReporter(connection).delivery(atSupplier(booking), '2099-03-01', '2099-03-31', { db: env.db, sandboxSlowMs: 0 });
    expect((await read()).days).toEqual([
      { date: '2099-03-01', impressions: 1000, clicks: 0, completions: 0, spendMinor: 1234 },
      { date: '2099-03-02', impressions: 2000, clicks: 0, completions: 0, spendMinor: 2450 },
    ]);
    // The seller restates a past day (fewer impressions, less spend): the next read carries it, not the old figure.
    seller.delivery.set(mediaBuyId, [
      { date: '2099-03-01', impressions: 800, spend: 9.6 },
      { date: '2099-03-02', impressions: 2000, spend: 24.5 },
    ]);
    expect((await read()).days[0]).toEqual({ date: '2099-03-01', impressions: 800, clicks: 0, completions: 0, spendMinor: 960 });
  }, 60_000);
});
