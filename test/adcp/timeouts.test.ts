import { sellersAt } from '../support/adcp-env';
import { createTestEnv, json, type TestApi, type TestEnv } from '../support/api';
import type { BookingBody } from '../support/bookings';
import { until } from '../support/wait';
import { lossyProxies, type Seen } from '../support/lossy-proxy';
import { launchOnSeller } from '../support/adcp-buy';
import { productRef, startTestSeller, type TestSeller } from '../support/adcp-test-seller';
import { walletAndLedger } from '../support/wallet';
import type { RunningWorkers } from '../../workers/main';

/**
 * A seller call that runs out of time: the line goes to a person at the timeout, nothing more is
 * sent (no resend after it), and what the seller still answers within SUPPLIER_LATE_ANSWER_MS is
 * kept on the attempt and told in the booking's events (a slow seller's media buy id is the
 * evidence the person needs); past that the request is cut.
 */
let patient: TestSeller;
let hasty: TestSeller;
let lossy: TestSeller;
let env: TestEnv;
let api: TestApi;
let workers: RunningWorkers;
let hastyWorkers: RunningWorkers;
const proxies = lossyProxies();
/** create_media_buy requests the lossy proxy passed on; every answer is lost. */
const lostCreates: Seen = [];

beforeAll(async () => {
  [patient, hasty, lossy] = await Promise.all([startTestSeller({ slowMs: 5_000 }), startTestSeller({ slowMs: 6_000 }), startTestSeller()]);
  env = await createTestEnv();
  const sellers = sellersAt({
    ctl: patient.agentUrl,
    spot: hasty.agentUrl,
    acme: await proxies.to(new URL(lossy.agentUrl).origin, lostCreates, Infinity),
  });
  api = await env.api({ ADCP_SELLERS: sellers });
  // 2.5 s to answer; a late answer is waited for eight more (ctl, acme) or half a second (spot).
  workers = await env.workers({
    ADCP_SELLERS: sellers,
    SUPPLIER_TIMEOUT_MS: '2500',
    SUPPLIER_LATE_ANSWER_MS: '8000',
    WORKER_QUEUES: 'supplier.adcp-ctl,supplier.adcp-acme',
  });
  hastyWorkers = await env.workers({
    ADCP_SELLERS: sellers,
    SUPPLIER_TIMEOUT_MS: '2500',
    SUPPLIER_LATE_ANSWER_MS: '500',
    WORKER_QUEUES: 'supplier.adcp-spot',
  });
}, 60_000);
afterAll(async () => {
  await workers?.close();
  await hastyWorkers?.close();
  await env?.close();
  proxies.close();
  await Promise.all([patient, hasty, lossy].map((s) => s?.stop()));
});

const bookingOf = async (token: string, id: string) =>
  (
    await json<{ booking: BookingBody & { events: Array<{ action: string; detail: unknown }> } }>(
      await api.fetch(`/api/v1/bookings/${id}`, { token }),
    )
  ).booking;

test("a seller answering after the timeout: the line goes to a person at the timeout, and the seller's late answer is kept and told", async () => {
  const { token, booking } = await launchOnSeller(env, api, 'org-t1', 'adcp-ctl', productRef('ctv_slow'));
  await until(
    'the line goes to reconciliation',
    async () => (await bookingOf(token, booking.id)).lines[0]!.status === 'reconciliation-required',
  );
  await until('the late answer is kept', async () => {
    const b = await bookingOf(token, booking.id);
    return b.events.some((e) => e.action === 'line.late-supplier-answer');
  });
  const after = await bookingOf(token, booking.id);
  const line = after.lines[0] as BookingBody['lines'][number] & {
    attempts: Array<{ operation: string; status: string; lateOutcome: unknown }>;
  };
  expect(line.status).toBe('reconciliation-required');
  const attempt = line.attempts.find((a) => a.operation === 'book')!;
  expect(attempt.status).toBe('unknown');
  // The seller's media buy, for whoever resolves the line.
  const mediaBuyId = patient.creates.length ? [...patient.buys.keys()].at(-1)! : null;
  expect(attempt.lateOutcome).toEqual({ kind: 'confirmed', providerReference: expect.stringContaining(`${mediaBuyId}/`) });
  expect(after.events.find((e) => e.action === 'line.late-supplier-answer')!.detail).toMatchObject({
    outcome: { kind: 'confirmed' },
  });
  expect(patient.creates).toHaveLength(1);
  expect((await walletAndLedger(env, 'org-t1')).consistent).toBe(true);
}, 60_000);

test('a seller still silent when the late wait ends: the request is cut, and nothing is kept', async () => {
  const { token, booking } = await launchOnSeller(env, api, 'org-t2', 'adcp-spot', productRef('ctv_slow'));
  await until(
    'the line goes to reconciliation',
    async () => (await bookingOf(token, booking.id)).lines[0]!.status === 'reconciliation-required',
  );
  // The seller books once its six seconds are up; had the request not been cut, its answer would then be kept.
  await until('the seller has booked', async () => hasty.buys.size > 0, 20_000);
  await new Promise((r) => setTimeout(r, 1_000));
  const attempt = await env.db('supplier_attempts').where({ booking_id: booking.id, operation: 'book' }).first();
  expect(attempt.status).toBe('unknown');
  expect(attempt.late_outcome).toBeNull();
  expect((await bookingOf(token, booking.id)).events.some((e) => e.action === 'line.late-supplier-answer')).toBe(false);
}, 60_000);

test('no resend after the timeout: every answer lost, the sends stop when the time is up, short of the four the resend rule allows', async () => {
  const { token, booking } = await launchOnSeller(env, api, 'org-t3', 'adcp-acme', productRef('ctv_sync'));
  await until(
    'the line goes to reconciliation',
    async () => (await bookingOf(token, booking.id)).lines[0]!.status === 'reconciliation-required',
  );
  const atTimeout = lostCreates.length;
  // The rule's resends would go out 0.25, 1.25 and 3.25 s after the first: the last falls past the 2.5 s allowed.
  await new Promise((r) => setTimeout(r, 4_000));
  expect(lostCreates).toHaveLength(atTimeout);
  expect(lostCreates.length).toBeGreaterThanOrEqual(1);
  expect(lostCreates.length).toBeLessThan(4);
  // What the call said when it gave up is kept for whoever reconciles the line.
  const attempt = await env.db('supplier_attempts').where({ booking_id: booking.id, operation: 'book' }).first();
  expect(attempt.late_outcome).toMatchObject({ kind: 'unknown' });
}, 60_000);
