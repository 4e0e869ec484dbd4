import { randomUUID } from 'node:crypto';
import { sellersAt } from '../support/adcp-env';
import { createTestEnv, type TestApi, type TestEnv } from '../support/api';
import { post, readLine } from '../support/bookings';
import { until, untilFound } from '../support/wait';
import { walletAndLedger } from '../support/wallet';
import { launchOnSeller } from '../support/adcp-buy';
import { productRef, startTestSeller, type TestSeller } from '../support/adcp-test-seller';
import { addDays, dateOnly } from '../../shared/dates';
import type { RunningWorkers } from '../../workers/main';
import type { BookingLine } from '../../shared/bookings/booking-schemas';

/**
 * A change still unproven when its booking closes out (docs/bookings.md, "Verified control"): a
 * seller whose reporting delay outlasts the flight and the restatement window. Closeout comes
 * through the poll a clock advance queues; the stop is decided there on the final figures, so
 * nothing is left pending for ever: verified when they agree, failed (and told) when they do not.
 */
let seller: TestSeller;
let env: TestEnv;
let api: TestApi;
let workers: RunningWorkers;

const today = dateOnly(new Date());
const flight = { executionMode: 'sandbox' as const, startDate: today, endDate: addDays(today, 2) };

beforeAll(async () => {
  seller = await startTestSeller();
  // Its figures are final as it sends them, but it asks a week (the most a seller may) before they prove anything.
  seller.reportsFinal = true;
  env = await createTestEnv();
  const sellers = sellersAt({ 'acme-sandbox': seller.agentUrl }, {}, { 'acme-sandbox': { reportingDelayHours: 168 } });
  api = await env.api({ ADCP_SELLERS: sellers });
  workers = await env.workers({
    ADCP_SELLERS: sellers,
    DELIVERY_POLL_EVERY_MS: '3600000',
    DELIVERY_RESTATEMENT_DAYS: '1',
    WORKER_QUEUES: 'supplier.adcp-acme-sandbox',
  });
}, 60_000);
afterAll(async () => {
  await workers?.close();
  await env?.close();
  await seller?.stop();
});

async function stoppedLine() {
  const org = `org-vcc-${randomUUID().slice(0, 8)}`;
  const launched = await launchOnSeller(env, api, org, 'adcp-acme-sandbox', productRef('ctv_sync'), flight);
  const lineNow = () => readLine<BookingLine>(api, launched.token, launched.booking.id);
  const line = await untilFound('the seller books the line', async () => ((await lineNow()).status === 'confirmed' ? lineNow() : null));
  seller.simulate([today]);
  await advance(launched.token, 1);
  const res = await post(api, launched.token, `/api/v1/bookings/${launched.booking.id}/lines/${line.id}/stop`, {
    expectedVersion: (await lineNow()).version,
  });
  expect(res.status).toBe(202);
  const stopped = await untilFound('the stop to settle', async () => {
    const l = await lineNow();
    return l.status === 'stopped' && l.pendingOperation === null ? l : null;
  });
  expect(stopped.verification).toMatchObject({ operation: 'stop', state: 'pending' });
  return { org, ...launched, line: stopped, lineNow };
}

/** Moves the workspace's clock; within the flight and its restatement window, the poll it queues asks the seller. */
async function advance(token: string, days: number, asks = true) {
  const asked = seller.deliveryAsks.length;
  expect((await post(api, token, '/api/v1/sandbox/clock/advance', { days })).status).toBe(200);
  if (asks) await until('the clock advance asks the seller', async () => seller.deliveryAsks.length > asked);
}

test('past the flight and the restatement window, a stop the final figures agree with is verified at closeout, not left pending', async () => {
  const r = await stoppedLine();
  // A day passes, within the seller's reporting delay: still pending.
  await advance(r.token, 1);
  expect((await r.lineNow()).verification?.state).toBe('pending');
  // The flight (three days) and the restatement window (one) are over; the week's delay is not.
  await advance(r.token, 3, false);
  await until('the booking to close out', async () => !!(await env.db('bookings').where({ id: r.booking.id }).first()).closed_out_at);
  const line = await r.lineNow();
  expect(line.status).toBe('stopped');
  expect(line.verification).toMatchObject({ state: 'verified', evidence: { reason: 'the final figures agree', final: true } });
  const ops = await env.db('line_operations').where({ line_id: line.id, kind: 'stop' });
  expect(ops.map((o) => [o.verification, o.verification_version])).toEqual([['verified', 2]]);
  expect((await walletAndLedger(env, r.org)).consistent).toBe(true);
}, 120_000);

test('a stop the figures contradict is failed as soon as they say so, within the delay; the booking stays open while a person has the line', async () => {
  const r = await stoppedLine();
  const stopDay = dateOnly(new Date(r.line.verification!.effectiveAt!));
  // The seller's final report carries a day served after the stop.
  seller.delivery.get(r.line.providerReference!.split('/')[0]!)!.push({ date: addDays(stopDay, 1), impressions: 9_000, spend: 90 });
  await advance(r.token, 2);
  await until('the stop to be decided', async () => (await r.lineNow()).verification?.state !== 'pending');
  await advance(r.token, 2, false);
  const line = await r.lineNow();
  expect(line.verification).toMatchObject({ state: 'failed', evidence: { reason: 'delivered after the stop', spentMinor: 9_000 } });
  expect(line.status).toBe('reconciliation-required');
  const ops = await env.db('line_operations').where({ line_id: line.id, kind: 'stop' });
  expect(ops.map((o) => [o.verification, o.verification_version])).toEqual([['failed', 2]]);
  expect((await env.db('bookings').where({ id: r.booking.id }).first()).closed_out_at).toBeNull();
  expect((await walletAndLedger(env, r.org)).consistent).toBe(true);
}, 120_000);
