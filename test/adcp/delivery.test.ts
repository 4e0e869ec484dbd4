import { sellersAt } from '../support/adcp-env';
import { createTestEnv, json, type TestApi, type TestEnv } from '../support/api';
import { post } from '../support/bookings';
import { until } from '../support/wait';
import { launchOnSeller } from '../support/adcp-buy';
import { productRef, startTestSeller, type TestSeller } from '../support/adcp-test-seller';
import { parseAdcpReference } from '../../shared/adapters/adcp/outcomes';
import { addDays, dateOnly } from '../../shared/dates';
import type { RunningWorkers } from '../../workers/main';

/**
 * Delivery from AdCP sellers as production reads it: the workers' own job scheduler queues the
 * delivery poll on each seller's queue, and a sandbox clock's advance queues one for a sandbox
 * seller; nothing here calls the poll itself. Sellers report with a daily breakdown, or (as the
 * SDK's example sellers and Prebid's Sales Agent do) totals only.
 */
let daily: TestSeller;
let totals: TestSeller;
let sandbox: TestSeller;
let env: TestEnv;
let api: TestApi;
let workers: RunningWorkers;
let sandboxWorkers: RunningWorkers;

const today = dateOnly(new Date());
const flight = { startDate: addDays(today, -3), endDate: addDays(today, 10) };

beforeAll(async () => {
  [daily, totals, sandbox] = await Promise.all([startTestSeller(), startTestSeller(), startTestSeller()]);
  totals.totalsOnly = true;
  env = await createTestEnv();
  const sellers = sellersAt({ ctl: daily.agentUrl, spot: totals.agentUrl, 'acme-sandbox': sandbox.agentUrl });
  api = await env.api({ ADCP_SELLERS: sellers });
  // The live sellers are polled by the scheduler every second; the sandbox seller's scheduled poll
  // is an hour away, so only a clock advance asks it.
  workers = await env.workers({
    ADCP_SELLERS: sellers,
    DELIVERY_POLL_EVERY_MS: '1000',
    WORKER_QUEUES: 'supplier.adcp-ctl,supplier.adcp-spot',
  });
  sandboxWorkers = await env.workers({
    ADCP_SELLERS: sellers,
    DELIVERY_POLL_EVERY_MS: '3600000',
    WORKER_QUEUES: 'supplier.adcp-acme-sandbox',
  });
}, 60_000);
afterAll(async () => {
  await workers?.close();
  await sandboxWorkers?.close();
  await env?.close();
  await Promise.all([daily, totals, sandbox].map((s) => s?.stop()));
});

type LineDelivery = {
  impressions: number;
  spendMinor: number;
  days: Array<{ date: string; impressions: number; spendMinor: number; final: boolean }>;
};
async function deliveryOf(token: string, campaignId: string): Promise<LineDelivery | undefined> {
  const res = await api.fetch(`/api/v1/campaigns/${campaignId}/delivery`, { token });
  if (res.status !== 200) return undefined;
  return (await json<{ delivery: { lines: LineDelivery[] } }>(res)).delivery.lines[0];
}

async function confirmedBuy(org: string, seller: string, campaign: Parameters<typeof launchOnSeller>[5] = flight) {
  const launched = await launchOnSeller(env, api, org, seller, productRef('ctv_sync'), campaign);
  let reference: string | null = null;
  await until('the seller books the line', async () => {
    const row = await env.db('booking_lines').where({ booking_id: launched.booking.id }).first();
    reference = row?.status === 'confirmed' ? row.provider_reference : null;
    return !!reference;
  });
  return { ...launched, mediaBuyId: parseAdcpReference(reference!).mediaBuyId };
}

test("a live seller's daily figures reach the line through the scheduled poll, with no one calling it", async () => {
  const { token, campaignId, mediaBuyId } = await confirmedBuy('org-d1', 'adcp-ctl');
  daily.delivery.set(mediaBuyId, [
    { date: addDays(today, -3), impressions: 1000, spend: 12 },
    { date: addDays(today, -2), impressions: 2000, spend: 24 },
    { date: addDays(today, -1), impressions: 1500, spend: 18 },
  ]);
  await until('the scheduled poll brings the figures', async () => (await deliveryOf(token, campaignId))?.impressions === 4500);
  expect(await deliveryOf(token, campaignId)).toMatchObject({ impressions: 4500, spendMinor: 5400 });
  expect(daily.deliveryAsks.some((a) => a.media_buy_ids?.includes(mediaBuyId))).toBe(true);
}, 60_000);

test('a seller that reports totals only: each poll files what the totals grew by on the last day they cover', async () => {
  const { token, campaignId, mediaBuyId } = await confirmedBuy('org-d2', 'adcp-spot');
  totals.delivery.set(mediaBuyId, [
    { date: addDays(today, -3), impressions: 1000, spend: 12 },
    { date: addDays(today, -2), impressions: 2000, spend: 24 },
  ]);
  await until('the totals arrive', async () => (await deliveryOf(token, campaignId))?.impressions === 3000);
  const first = (await deliveryOf(token, campaignId))!;
  expect(first.spendMinor).toBe(3600);
  // Filed on yesterday, the last day asked for: the seller said nothing of which day.
  expect(first.days.filter((d) => d.impressions > 0)).toEqual([
    expect.objectContaining({ date: addDays(today, -1), impressions: 3000, spendMinor: 3600 }),
  ]);
  // The seller's totals grow: the day held again gets the new totals less the days before it (none).
  totals.delivery.set(mediaBuyId, [...totals.delivery.get(mediaBuyId)!, { date: addDays(today, -1), impressions: 500, spend: 6 }]);
  await until('the grown totals arrive', async () => (await deliveryOf(token, campaignId))?.impressions === 3500);
  expect((await deliveryOf(token, campaignId))!.spendMinor).toBe(4200);
}, 60_000);

test('a seller whose totals fall below the days held is not believed: the fetch fails with why, and the figures stay', async () => {
  const { token, campaignId, mediaBuyId, booking } = await confirmedBuy('org-d3', 'adcp-spot', {
    startDate: addDays(today, -5),
    endDate: addDays(today, 10),
  });
  const lineId = booking.lines[0]!.id;
  // Two days already held (the seller once gave a breakdown, or staff entered them).
  await env.db('delivery_days').insert(
    [addDays(today, -5), addDays(today, -4)].map((day) => ({
      line_id: lineId,
      day,
      advertiser_id: 'org-d3',
      booking_id: booking.id,
      impressions: 5000,
      clicks: 0,
      completions: 0,
      spend_minor: 6000,
      revision: 1,
      source: 'supplier',
      as_of: new Date(),
    })),
  );
  totals.delivery.set(mediaBuyId, [{ date: addDays(today, -5), impressions: 4000, spend: 48 }]);
  await until('the fetch is refused', async () => {
    const row = await env.db('delivery_fetches').where({ line_id: lineId }).first();
    return /went down/.test(row?.last_error ?? '');
  });
  expect((await deliveryOf(token, campaignId))!.impressions).toBe(10_000);
}, 60_000);

test("a sandbox seller's delivery is asked for when the workspace's clock moves", async () => {
  const { token, mediaBuyId } = await confirmedBuy('org-d4', 'adcp-acme-sandbox', {
    executionMode: 'sandbox',
    startDate: addDays(today, 1),
    endDate: addDays(today, 10),
  });
  expect(sandbox.deliveryAsks.filter((a) => a.media_buy_ids?.includes(mediaBuyId))).toHaveLength(0);
  expect((await post(api, token, '/api/v1/sandbox/clock/advance', { days: 4 })).status).toBe(200);
  await until('the clock advance asks the seller', async () =>
    sandbox.deliveryAsks.some((a) => a.media_buy_ids?.includes(mediaBuyId) && a.end_date === addDays(today, 3)),
  );
}, 60_000);

test('a seller that calls its figures final (is_final) makes those days final at once; a later figure for one is a discrepancy, not applied', async () => {
  const { token, campaignId, mediaBuyId, booking } = await confirmedBuy('org-d5', 'adcp-ctl');
  daily.reportsFinal = true;
  try {
    daily.delivery.set(mediaBuyId, [{ date: addDays(today, -2), impressions: 1000, spend: 12 }]);
    await until('the final figures arrive', async () => (await deliveryOf(token, campaignId))?.impressions === 1000);
  } finally {
    daily.reportsFinal = false;
  }
  expect((await deliveryOf(token, campaignId))!.days.filter((d) => d.impressions > 0)).toEqual([
    expect.objectContaining({ date: addDays(today, -2), final: true }),
  ]);
  // The seller restates the day it called final: kept apart for a person, the final figure stands.
  daily.delivery.set(mediaBuyId, [{ date: addDays(today, -2), impressions: 800, spend: 9.6 }]);
  await until('the restatement is kept apart', async () =>
    Boolean(await env.db('delivery_discrepancies').where({ line_id: booking.lines[0]!.id }).first()),
  );
  expect((await deliveryOf(token, campaignId))!.impressions).toBe(1000);
}, 60_000);
