import { sellersAt } from '../support/adcp-env';
import { createHash, randomUUID } from 'node:crypto';
import { createTestEnv, json, type TestApi, type TestEnv } from '../support/api';
import { approve, draftCampaign, post, type BookingBody } from '../support/bookings';
import { makeCreative } from '../support/creatives';
import { until } from '../support/wait';
import { fundWallet, walletAndLedger } from '../support/wallet';
import { grantSellerAccess } from '../support/adcp-buy';
import { VIDEO_FORMAT, VIDEO_SLOT, startTestSeller, type TestSeller } from '../support/adcp-test-seller';
import { parseAdcpReference } from '../../shared/adapters/adcp/outcomes';
import { addDays, dateOnly } from '../../shared/dates';
import type { RunningWorkers } from '../../workers/main';

/**
 * The whole journey with a live AdCP seller, through the API: the seller's capabilities, its
 * products for a brief, a plan on one of them, approval, funding, the creative reviewed by the
 * seller, live launch, the seller finishing the booking later (its signed webhook), delivery (read
 * by the workers' own scheduled poll) and a restatement of it, pause, resume, a budget change and
 * stop, each applied at the seller. The flight runs now, so the scheduler's days are the flight's.
 */
let seller: TestSeller;
let env: TestEnv;
let api: TestApi;
let workers: RunningWorkers;
const ORG = 'org-journey';

beforeAll(async () => {
  seller = await startTestSeller();
  env = await createTestEnv();
  const sellers = sellersAt({ ctl: seller.agentUrl }, { ctl: seller.jwksUrl });
  api = await env.api({ ADCP_SELLERS: sellers });
  workers = await env.workers({
    ADCP_SELLERS: sellers,
    PUBLIC_BASE_URL: api.deps.urls.base,
    ADCP_TASK_POLL_INTERVAL_MS: '3600000',
    DELIVERY_POLL_EVERY_MS: '1000',
    WORKER_QUEUES: 'supplier.adcp-ctl,creative-review.adcp-ctl',
  });
}, 60_000);
afterAll(async () => {
  await workers?.close();
  await env?.close();
  await seller?.stop();
});
const today = dateOnly(new Date());
const day = (n: number) => addDays(today, n);

const read = async (token: string, bookingId: string) =>
  (await json<{ booking: BookingBody }>(await api.fetch(`/api/v1/bookings/${bookingId}`, { token }))).booking;

async function settledOperation(lineId: string, operation: string, count: number) {
  await until(`the ${operation} is applied`, async () => {
    const rows = await env.db('supplier_attempts').where({ line_id: lineId, operation, status: 'applied' });
    return rows.length >= count;
  });
}

test('capabilities → products → plan → approve → fund → live launch → async completion → creatives → delivery → pause, resume, budget → stop', async () => {
  const token = await env.issuer.token({ org: ORG, user: `${ORG}-buyer` });
  expect((await api.fetch('/api/v1/auth/context', { token })).status).toBe(200);

  // Capabilities: the seller as an adapter, with what it declared.
  const { adapters } = await json<{ adapters: Array<{ key: string; seller?: { capabilities: unknown } }> }>(
    await api.fetch('/api/v1/adapters', { token }),
  );
  expect(adapters.find((a) => a.key === 'adcp-ctl')!.seller!.capabilities).toMatchObject({
    majorVersions: [3],
    idempotency: { supported: true, replayTtlSeconds: 86_400 },
  });

  // Products for a brief, once ops granted access naming the workspace's account on the seller.
  await grantSellerAccess(env.db, ORG, 'adcp-ctl');
  const products = await json<{
    products: Array<{ productId: string; pricingOptions: Array<{ pricingOptionId: string; currency: string }> }>;
  }>(await api.fetch('/api/v1/adapters/adcp-ctl/products?channel=ctv&brief=Spring%20launch%20on%20connected%20TV', { token }));
  const product = products.products.find((p) => p.productId === 'ctv_async')!;
  expect(product.pricingOptions[0]).toMatchObject({ currency: 'GBP' });
  const supplierProduct = { productId: product.productId, pricingOptionId: product.pricingOptions[0]!.pricingOptionId };

  // The creative, reviewed by the seller itself (sync_creatives): its approval is what live launch needs.
  const creative = await makeCreative(api, token, 'ctv', { format: VIDEO_FORMAT });
  expect((await post(api, token, `/api/v1/creatives/${creative.id}/submit`, { adapterKey: 'adcp-ctl', channel: 'ctv' })).status).toBe(202);
  await until('the seller approves the creative', async () => {
    const c = await json<{ creative: { reviews: Array<{ status: string }> } }>(
      await api.fetch(`/api/v1/creatives/${creative.id}`, { token }),
    );
    return c.creative.reviews.at(-1)?.status === 'approved';
  });
  // The seller fetched the very bytes reviewed, from the asset URL in its format's video slot.
  const synced = seller.creatives.at(-1)!;
  expect(synced.creative.assets[VIDEO_SLOT]).toMatchObject({ asset_type: 'video', width: 1280, height: 720 });
  expect(`sha256:${createHash('sha256').update(synced.fetched!).digest('hex')}`).toBe(creative.assetFingerprint);

  // Plan, approve, fund, launch live.
  const line = { channel: 'ctv', adapterKey: 'adcp-ctl', budgetMinor: 100_000, supplierProduct, creativeIds: [creative.id] };
  const { campaignId, planVersion } = await draftCampaign(api, token, [line] as never, {
    executionMode: 'live',
    // Room above the budget for the raise below: no change takes the line past the maximum commitment.
    maximumCommitmentMinor: 120_000,
    startDate: day(-3),
    endDate: day(27),
  });
  await approve(api, token, campaignId, planVersion);
  await fundWallet(env, ORG, 1_000_000);
  const launched = await post(api, token, `/api/v1/campaigns/${campaignId}/launch`);
  expect(launched.status).toBe(202);
  const bookingId = (await json<{ booking: BookingBody }>(launched)).booking.id;

  // The seller answers submitted; it finishes later and says so by signed webhook (polling is an hour away).
  let task: { task_id: string } | undefined;
  await until('the seller holds the booking', async () => {
    task = await env.db('supplier_tasks').where({ booking_id: bookingId }).first();
    return !!task;
  });
  expect((await read(token, bookingId)).lines[0]!.status).toBe('in-progress');
  seller.finish(task!.task_id);
  await until('the webhook confirms the line', async () => (await read(token, bookingId)).lines[0]!.status === 'confirmed');
  let booked = (await read(token, bookingId)).lines[0]!;
  const { mediaBuyId } = parseAdcpReference(booked.providerReference!);
  expect(seller.buys.get(mediaBuyId)!.packages[0]).toMatchObject({ product_id: 'ctv_async', budget: 1000 });

  // Delivery: the seller's daily figures, read by the workers' scheduled poll.
  seller.delivery.set(mediaBuyId, [
    { date: day(-3), impressions: 1000, spend: 12 },
    { date: day(-2), impressions: 2000, spend: 24 },
    { date: day(-1), impressions: 1500, spend: 18 },
  ]);
  const delivery = async () =>
    (
      await json<{
        delivery: { lines: Array<{ impressions: number; spendMinor: number; days: Array<{ date: string; impressions: number }> }> };
      }>(await api.fetch(`/api/v1/campaigns/${campaignId}/delivery?from=${day(-3)}&to=${day(-1)}`, { token }))
    ).delivery.lines[0]!;
  await until('the scheduled poll brings the figures', async () => (await delivery()).impressions === 4500);
  expect(await delivery()).toMatchObject({ impressions: 4500, spendMinor: 5400 });
  // The seller restates a past day: the next poll replaces it.
  seller.delivery.set(mediaBuyId, [
    { date: day(-3), impressions: 700, spend: 8.4 },
    { date: day(-2), impressions: 2000, spend: 24 },
    { date: day(-1), impressions: 1500, spend: 18 },
  ]);
  await until('the restatement arrives', async () => (await delivery()).impressions === 4200);
  const restated = await delivery();
  expect(restated).toMatchObject({ impressions: 4200, spendMinor: 5040 });
  expect(restated.days.find((d) => d.date === day(-3))).toMatchObject({ impressions: 700 });

  // Pause and resume: the seller's own state follows.
  expect(
    (await post(api, token, `/api/v1/bookings/${bookingId}/lines/${booked.id}/pause`, { expectedVersion: booked.version })).status,
  ).toBe(202);
  await until('the line is paused', async () => (await read(token, bookingId)).lines[0]!.status === 'stopped');
  expect(seller.buys.get(mediaBuyId)!.status).toBe('paused');
  booked = (await read(token, bookingId)).lines[0]!;
  expect(
    (await post(api, token, `/api/v1/bookings/${bookingId}/lines/${booked.id}/resume`, { expectedVersion: booked.version })).status,
  ).toBe(202);
  await until('the line runs again', async () => (await read(token, bookingId)).lines[0]!.status === 'confirmed');
  expect(seller.buys.get(mediaBuyId)!.status).toBe('active');

  // A budget change: the package's budget at the seller, in pounds.
  const current = await read(token, bookingId);
  const amended = await api.fetch(`/api/v1/campaigns/${campaignId}/amendments`, {
    method: 'POST',
    token,
    headers: { 'content-type': 'application/json', 'idempotency-key': randomUUID() },
    body: JSON.stringify({ expectedVersion: current.version, lines: [{ lineId: booked.id, budgetMinor: 120_000 }] }),
  });
  expect(amended.status).toBe(202);
  await settledOperation(booked.id, 'change-budget', 1);
  expect(seller.buys.get(mediaBuyId)!.packages[0]!.budget).toBe(1200);

  // Stop: the seller cancels the buy.
  booked = (await read(token, bookingId)).lines[0]!;
  expect(
    (await post(api, token, `/api/v1/bookings/${bookingId}/lines/${booked.id}/stop`, { expectedVersion: booked.version })).status,
  ).toBe(202);
  await settledOperation(booked.id, 'stop', 1);
  expect(seller.buys.get(mediaBuyId)!.status).toBe('canceled');
  const operations = await env.db('supplier_attempts').where({ line_id: booked.id }).whereNot({ operation: 'book' }).orderBy('created_at');
  expect(operations.map((o) => [o.operation, o.status])).toEqual([
    ['pause', 'applied'],
    ['resume', 'applied'],
    ['change-budget', 'applied'],
    ['stop', 'applied'],
  ]);
  for (const o of operations) expect(o.detail).toMatchObject({ detail: { drift: [] } });
  expect((await walletAndLedger(env, ORG)).consistent).toBe(true);
}, 120_000);
