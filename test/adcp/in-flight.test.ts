import { sellersAt } from '../support/adcp-env';
import { randomUUID } from 'node:crypto';
import { createTestEnv, json, type TestApi, type TestEnv } from '../support/api';
import { post, type BookingBody } from '../support/bookings';
import { approvedCreative } from '../support/creatives';
import { until } from '../support/wait';
import { launchOnSeller } from '../support/adcp-buy';
import { startExampleSeller, type RunningSeller } from '../support/adcp-sellers';
import { AdcpSellerConnection } from '../../shared/adapters/adcp/connection';
import type { LineAtSupplier } from '../../shared/adapters/adapter';
import { adcpOperations, adcpReporter, driftOf } from '../../workers/adapters/adcp/in-flight';
import { adcpReviewer } from '../../workers/adapters/adcp/review';
import type { RunningWorkers } from '../../workers/main';

let seller: RunningSeller;
let env: TestEnv;
let api: TestApi;
let workers: RunningWorkers;
let connection: AdcpSellerConnection;

const PRODUCT = { productId: 'acme_dooh_remnant_q2', pricingOptionId: 'cpm_floor' };

beforeAll(async () => {
  seller = await startExampleSeller('non_guaranteed');
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
});

async function readBooking(token: string, id: string) {
  const res = await api.fetch(`/api/v1/bookings/${id}`, { token });
  return res.status === 200 ? (await json<{ booking: BookingBody }>(res)).booking : null;
}

/** A live line booked on the seller, as the engine booked it. */
async function bookedLine(org: string) {
  const { token, booking } = await launchOnSeller(env, api, org, 'adcp-spot', PRODUCT);
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

  test('a change the seller answers but does not apply is flagged as drift by the read-back', async () => {
    const { booking } = await bookedLine('org-f2');
    const ops = adcpOperations(connection);
    const ctx = { db: env.db, sandboxSlowMs: 0 };
    const base = atSupplier(booking);
    const changed = await ops.changeBudget({ ...base, attemptId: `att_${randomUUID()}`, newBudgetMinor: 150_000 }, ctx);
    expect(changed.kind).toBe('applied');
    const detail = (changed as unknown as { detail: { readBack: { budget: number | null }; drift: string[] } }).detail;
    // The example seller answers the update but keeps the package's budget: that is drift.
    expect(detail.drift).toEqual(
      detail.readBack.budget === 1500 ? [] : [`asked for a budget of 1500; the seller shows ${detail.readBack.budget ?? 'none'}`],
    );
    // It answers a cancellation too, yet its read-back still shows the buy waiting for creatives.
    const stopped = await ops.stop({ ...base, attemptId: `att_${randomUUID()}` }, ctx);
    expect(stopped).toMatchObject({
      kind: 'applied',
      detail: { readBack: { status: 'pending_creatives' }, drift: ['asked to stop; the seller shows pending_creatives'] },
    });
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

  test("delivery is the seller's daily figures for the line's package, in minor units", async () => {
    const { booking } = await bookedLine('org-f3');
    const report = await adcpReporter(connection)
      .delivery(atSupplier(booking), '2099-03-01', '2099-03-31', { db: env.db, sandboxSlowMs: 0 })
      .catch((err: Error) => err);
    // The example seller's delivery answer may fail its own schema; either way nothing is invented.
    if (report instanceof Error) expect(report.message).toMatch(/get_media_buy_delivery|answer/);
    else {
      expect(Number.isNaN(Date.parse(report.asOf))).toBe(false);
      for (const day of report.days) {
        expect(day.date >= '2099-03-01' && day.date <= '2099-03-31').toBe(true);
        expect(Number.isInteger(day.spendMinor)).toBe(true);
      }
    }
  }, 60_000);

  test("the seller's creative review is sync_creatives: a creative in one of its formats is approved under the seller's id", async () => {
    const { token } = await bookedLine('org-f4');
    const creativeId = await approvedCreative(api, env.db, token, 'adcp-spot');
    const review = (format: string) =>
      adcpReviewer(connection).review(
        {
          attemptId: `att_${randomUUID()}`,
          reviewId: randomUUID(),
          creativeId,
          version: 1,
          name: 'Spring spot',
          channel: 'ctv',
          format,
          bytes: Buffer.from('x'),
          assetFingerprint: 'f',
          metadataDigest: 'd',
        },
        { db: env.db, sandboxSlowMs: 0 },
      );
    const approved = await review('video_15s');
    expect(approved).toMatchObject({ kind: 'approved', providerReference: expect.any(String) });
  }, 60_000);
});
