import { sellersAt } from '../support/adcp-env';
import { createTestEnv, type TestApi, type TestEnv } from '../support/api';
import { post, readLine } from '../support/bookings';
import { untilFound } from '../support/wait';
import { lossyProxies, type Seen } from '../support/lossy-proxy';
import { launchOnSeller } from '../support/adcp-buy';
import { productRef, startTestSeller, type TestSeller } from '../support/adcp-test-seller';
import type { BookingLine } from '../../shared/bookings/booking-schemas';
import type { RunningWorkers } from '../../workers/main';

/**
 * A change in flight whose answer is lost (docs/adcp.md, "Resending"): update_media_buy is sent
 * again under the same key, as a booking is, where the seller's replay window makes that safe,
 * and never to a seller that declares no idempotency.
 */
let seller: TestSeller;
let forgetful: TestSeller;
const proxies = lossyProxies();
let env: TestEnv;
let api: TestApi;
let workers: RunningWorkers;
const pauses: Seen = [];
const forgetfulStops: Seen = [];
const stops: Seen = [];

/** A proxy to the seller that loses its answer to the first change matching `watched`. */
const losingFirst = (target: TestSeller, seen: Seen, watched: string) => proxies.to(new URL(target.agentUrl).origin, seen, 1, watched);

beforeAll(async () => {
  seller = await startTestSeller();
  forgetful = await startTestSeller({ idempotent: false });
  env = await createTestEnv();
  const sellers = sellersAt({
    ctl: await losingFirst(seller, pauses, '"paused":true'),
    spot: await losingFirst(forgetful, forgetfulStops, '"canceled":true'),
    acme: await losingFirst(seller, stops, '"canceled":true'),
  });
  api = await env.api({ ADCP_SELLERS: sellers });
  workers = await env.workers({ ADCP_SELLERS: sellers, WORKER_QUEUES: 'supplier.adcp-ctl,supplier.adcp-spot,supplier.adcp-acme' });
}, 60_000);
afterAll(async () => {
  await workers?.close();
  await env?.close();
  proxies.close();
  await seller?.stop();
  await forgetful?.stop();
});

/** A line booked on `adapterKey`, then paused or stopped; resolves with the line once `settled` says so. */
async function changeWithLostAnswer(org: string, adapterKey: string, control: 'pause' | 'stop', settled: (l: BookingLine) => boolean) {
  const { token, booking } = await launchOnSeller(env, api, org, adapterKey, productRef('ctv_sync'));
  const lineNow = () => readLine<BookingLine>(api, token, booking.id);
  const line = await untilFound('the seller books the line', async () => ((await lineNow()).status === 'confirmed' ? lineNow() : null));
  const res = await post(api, token, `/api/v1/bookings/${booking.id}/lines/${line.id}/${control}`, { expectedVersion: line.version });
  expect(res.status).toBe(202);
  return untilFound(`the ${control} to settle`, async () => {
    const l = await lineNow();
    return settled(l) ? l : null;
  });
}

const sentArguments = (seen: Seen) =>
  seen.map((s) => JSON.stringify((JSON.parse(s.request) as { params: { arguments: unknown } }).params.arguments));

test('a pause whose answer is lost is sent again with the same key and body: the seller replays its answer, the buy is paused once, and so is the line', async () => {
  const line = await changeWithLostAnswer('org-lc1', 'adcp-ctl', 'pause', (l) => l.status === 'stopped' && l.pendingOperation === null);
  const buyId = line.providerReference!.split('/')[0]!;
  expect(line.stop).toMatchObject({ kind: 'pause' });
  expect(pauses.map((s) => s.delivered)).toEqual([false, true]);
  expect(new Set(sentArguments(pauses)).size).toBe(1);
  expect(sentArguments(pauses)[0]).toContain('"idempotency_key":"att_');
  // The second answer is the seller's replay of the first: its platform saw one pause.
  expect(pauses[1]!.answer).toMatch(/replayed/);
  expect(seller.updates.filter((u) => u.mediaBuyId === buyId)).toHaveLength(1);
  expect(line.attempts.find((a) => a.operation === 'pause')).toMatchObject({ status: 'applied', drift: [] });
}, 60_000);

test('to a seller that declares no idempotency, a stop whose answer is lost is not sent again: the line goes to a person', async () => {
  const line = await changeWithLostAnswer('org-lc2', 'adcp-spot', 'stop', (l) => l.status === 'reconciliation-required');
  const buyId = line.providerReference!.split('/')[0]!;
  expect(forgetfulStops).toHaveLength(1);
  expect(forgetful.updates.filter((u) => u.mediaBuyId === buyId)).toHaveLength(1);
  expect(line.attempts.find((a) => a.operation === 'stop')).toMatchObject({ status: 'unknown' });
}, 60_000);

test('a stop whose answer is lost and whose resend the seller refuses (its idempotency layer keeps no answer to a cancel) is read back: the buy shows it canceled, so the stop was applied', async () => {
  const line = await changeWithLostAnswer('org-lc3', 'adcp-acme', 'stop', (l) => l.status === 'stopped' && l.pendingOperation === null);
  const buyId = line.providerReference!.split('/')[0]!;
  expect(line.stop).toMatchObject({ kind: 'end' });
  // Both reached the seller's platform: the first canceled the buy, the second was refused as a second cancel.
  expect(stops.map((s) => s.delivered)).toEqual([false, true]);
  expect(stops[1]!.answer).toMatch(/NOT_CANCELLABLE/);
  expect(seller.updates.filter((u) => u.mediaBuyId === buyId)).toHaveLength(2);
  expect(seller.buys.get(buyId)!.status).toBe('canceled');
  expect(line.attempts.find((a) => a.operation === 'stop')).toMatchObject({ status: 'applied', drift: [] });
  const attempt = await env.db('supplier_attempts').where({ line_id: line.id, operation: 'stop' }).first('detail');
  expect(attempt.detail.detail).toMatchObject({
    readBack: { status: 'canceled' },
    resendRefused: expect.stringMatching(/^NOT_CANCELLABLE/),
  });
}, 60_000);
