import { randomUUID } from 'node:crypto';
import { sellersAt } from '../support/adcp-env';
import { createTestEnv, type TestApi, type TestEnv } from '../support/api';
import { post, readBooking } from '../support/bookings';
import { until, untilFound } from '../support/wait';
import { walletAndLedger } from '../support/wallet';
import { launchOnSeller } from '../support/adcp-buy';
import { productRef, startTestSeller, type TestSeller } from '../support/adcp-test-seller';
import { parseAdcpReference } from '../../shared/adapters/adcp/outcomes';
import { assignClient, grantStaff } from '../../shared/staff/staff-store';
import { addDays, dateOnly } from '../../shared/dates';
import type { RunningWorkers } from '../../workers/main';
import type { BookingLine } from '../../shared/bookings/booking-schemas';

/**
 * A live budget cut that a seller records and does not serve (as Prebid's Sales Agent does with
 * flight changes), where money moves: the cut gives back what the line may no longer spend, its
 * delivery contradicts it, and a person who finds the old budget still running at the seller
 * resolves it not applied: the old budget is back, and so is the money held for it.
 */
let seller: TestSeller;
let env: TestEnv;
let api: TestApi;
let workers: RunningWorkers;

const today = dateOnly(new Date());

beforeAll(async () => {
  seller = await startTestSeller();
  seller.ignoresFlightChanges = true;
  env = await createTestEnv();
  const sellers = sellersAt(
    { ctl: seller.agentUrl },
    {},
    { ctl: { honoursCancel: false, appliesFlightChanges: false, reportingDelayHours: 0 } },
  );
  api = await env.api({ ADCP_SELLERS: sellers });
  workers = await env.workers({ ADCP_SELLERS: sellers, DELIVERY_POLL_EVERY_MS: '1000' });
}, 60_000);
afterAll(async () => {
  await workers?.close();
  await env?.close();
  await seller?.stop();
});

test('a live cut the seller ignores: released when applied, contradicted by delivery, and resolved not applied the hold comes back with the old budget', async () => {
  const org = 'org-contradicted-live';
  const {
    token,
    campaignId,
    booking: launched,
  } = await launchOnSeller(env, api, org, 'adcp-ctl', productRef('ctv_sync'), {
    startDate: addDays(today, -3),
    endDate: addDays(today, 20),
  });
  const bookingId = launched.id;
  const line = await untilFound('the seller books the line', async () => {
    const l = (await readBooking(api, token, bookingId)).lines[0]!;
    return l.status === 'confirmed' ? l : null;
  });
  const held = (await walletAndLedger(env, org)).wallet;

  // The cut: the seller records it (its read-back agrees) and keeps serving the old budget.
  const booking = await readBooking(api, token, bookingId);
  const amended = await api.fetch(`/api/v1/campaigns/${campaignId}/amendments`, {
    method: 'POST',
    token,
    headers: { 'content-type': 'application/json', 'idempotency-key': randomUUID() },
    body: JSON.stringify({ expectedVersion: booking.version, lines: [{ lineId: line.id, budgetMinor: 10_000 }] }),
  });
  expect(amended.status).toBe(202);
  await until('the cut to settle', async () => {
    const l = (await readBooking(api, token, bookingId)).lines[0]!;
    return l.budgetMinor === 10_000 && l.pendingOperation === null;
  });
  const cut = await env.db('line_operations').where({ line_id: line.id, kind: 'change-budget' }).first();
  const release = await env.db('wallet_entries').where({ kind: 'release', subject_type: 'line_operation', subject_id: cut.id }).first();
  expect(Number(release.amount_minor)).toBe(90_000);

  // Its delivery: 150 over three days, past the cut's 100.
  seller.delivery.set(
    parseAdcpReference(line.providerReference!).mediaBuyId,
    [-3, -2, -1].map((k) => ({ date: addDays(today, k), impressions: 5_000, spend: 50 })),
  );
  const failed = await untilFound('the cut to fail', async () => {
    const l = (await readBooking(api, token, bookingId)).lines[0] as unknown as BookingLine;
    return l.verification?.state === 'failed' ? l : null;
  });
  expect(failed.status).toBe('reconciliation-required');

  await grantStaff(env.staff, 'staff-cl');
  await assignClient(env.staff, 'staff-cl', org);
  const staff = await env.issuer.token({ org: 'staff-org', user: 'staff-cl' });
  const resolved = await post(api, staff, `/api/v1/internal/fulfilment/bookings/${bookingId}/lines/${line.id}/resolve`, {
    expectedVersion: failed.version,
    outcome: 'not-applied',
    evidence: 'The seller’s order still carries the budget of 1,000; its ad server never took the cut.',
  });
  expect(resolved.status).toBe(200);
  expect((await readBooking(api, token, bookingId)).lines[0]).toMatchObject({ status: 'confirmed', budgetMinor: 100_000 });
  // What the cut gave back is held again, under the cut's own operation, once.
  const again = await env.db('wallet_entries').where({ kind: 'reservation', subject_type: 'line_operation', subject_id: cut.id });
  expect(again.map((e) => Number(e.amount_minor))).toEqual([90_000]);
  const after = await walletAndLedger(env, org);
  expect(after.consistent).toBe(true);
  // Held as before the cut, less what the seller's delivery has since captured.
  const captured = await env.db('wallet_entries').where({ line_id: line.id, kind: 'capture' }).sum({ s: 'amount_minor' });
  expect(after.wallet.reservedMinor).toBe(held.reservedMinor - Number(captured[0]!.s ?? 0));
}, 90_000);
