import { randomUUID } from 'node:crypto';
import { sellersAt } from '../support/adcp-env';
import { createTestEnv, type TestApi, type TestEnv } from '../support/api';
import { post, readBooking, readLine } from '../support/bookings';
import { until, untilFound } from '../support/wait';
import { subscribe } from '../support/webhooks';
import { walletAndLedger } from '../support/wallet';
import { assignClient, grantStaff } from '../../shared/staff/staff-store';
import { launchOnSeller } from '../support/adcp-buy';
import { controlSeller, productRef, startTestSeller, type TestSeller } from '../support/adcp-test-seller';
import { parseAdcpReference } from '../../shared/adapters/adcp/outcomes';
import { addDays, dateOnly } from '../../shared/dates';
import type { RunningWorkers } from '../../workers/main';
import type { BookingLine } from '../../shared/bookings/booking-schemas';

/**
 * In-flight changes proven by the seller's delivery (docs/bookings.md, "Verified control"), on
 * sandbox AdCP sellers whose delivery follows the workspace's clock: an honest seller, and a lax
 * one set up as Prebid's Sales Agent behaves (ignores `canceled`, records budget and end-date
 * changes without serving them) and configured as docs/adcp.md says for it. Delivery reaches
 * Flightdeck only through the polls a clock advance queues; nothing here calls a poll or the check.
 */
let honest: TestSeller;
let lax: TestSeller;
let env: TestEnv;
let api: TestApi;
let workers: RunningWorkers;

const today = dateOnly(new Date());
const flight = { executionMode: 'sandbox' as const, startDate: today, endDate: addDays(today, 19) };

beforeAll(async () => {
  [honest, lax] = await Promise.all([startTestSeller(), startTestSeller()]);
  lax.ignoresCancel = true;
  lax.ignoresFlightChanges = true;
  env = await createTestEnv();
  const sellers = sellersAt(
    { 'acme-sandbox': honest.agentUrl, 'lax-sandbox': lax.agentUrl },
    {},
    { 'lax-sandbox': { honoursCancel: false, appliesFlightChanges: false, reportingDelayHours: 0, webhookAuth: 'hmac-sha256' } },
  );
  api = await env.api({ ADCP_SELLERS: sellers });
  workers = await env.workers({
    ADCP_SELLERS: sellers,
    PUBLIC_BASE_URL: api.deps.urls.base,
    DELIVERY_POLL_EVERY_MS: '3600000',
    WORKER_QUEUES: 'supplier.adcp-acme-sandbox,supplier.adcp-lax-sandbox',
  });
}, 60_000);
afterAll(async () => {
  await workers?.close();
  await env?.close();
  await Promise.all([honest, lax].map((s) => s?.stop()));
});

/** A workspace with one confirmed sandbox line on the seller, subscribed to control failures. */
async function running(seller: string) {
  const org = `org-vc-${randomUUID().slice(0, 8)}`;
  const launched = await launchOnSeller(env, api, org, seller, productRef('ctv_sync'), flight);
  await subscribe(env, api, org, ['line.control_failed']);
  const line = await untilFound('the seller books the line', async () => {
    const l = (await readBooking(api, launched.token, launched.booking.id)).lines[0]!;
    return l.status === 'confirmed' ? l : null;
  });
  const mediaBuyId = parseAdcpReference(line.providerReference!).mediaBuyId;
  return { org, ...launched, lineId: line.id, mediaBuyId };
}
type Running = Awaited<ReturnType<typeof running>>;

const lineNow = (r: Running) => readLine<BookingLine>(api, r.token, r.booking.id);

async function control(r: Running, what: 'pause' | 'resume' | 'stop', settled: string) {
  const line = await lineNow(r);
  const res = await post(api, r.token, `/api/v1/bookings/${r.booking.id}/lines/${r.lineId}/${what}`, { expectedVersion: line.version });
  expect(res.status).toBe(202);
  return untilFound(`the ${what} to settle`, async () => {
    const l = await lineNow(r);
    return l.status === settled && l.pendingOperation === null ? l : null;
  });
}

/** The seller's ad server runs `days` days from the workspace's today, then the clock moves past them. */
async function runDays(r: Running, seller: TestSeller, days: number, clockDays = days) {
  const offset = Number((await env.db('sandbox_clocks').where({ advertiser_id: r.org }).first('offset_days'))?.offset_days ?? 0);
  const from = addDays(today, offset);
  seller.simulate(Array.from({ length: days }, (_, i) => addDays(from, i)));
  const asked = seller.deliveryAsks.length;
  expect((await post(api, r.token, '/api/v1/sandbox/clock/advance', { days: clockDays })).status).toBe(200);
  await until('the clock advance asks the seller', async () => seller.deliveryAsks.length > asked);
}

const failures = (org: string) => env.db('webhook_events').where({ workspace_id: org, type: 'line.control_failed' });

test('an honest seller: a pause is verified once a full day after it shows no delivery; a resume lets it deliver again', async () => {
  const r = await running('adcp-acme-sandbox');
  await runDays(r, honest, 1);
  const paused = await control(r, 'pause', 'stopped');
  expect(paused.verification).toMatchObject({ operation: 'pause', state: 'pending' });
  // The day of the pause itself and the next: nothing served while paused.
  await runDays(r, honest, 3);
  const verified = await untilFound('the pause to be verified', async () => {
    const l = await lineNow(r);
    return l.verification?.state === 'verified' ? l : null;
  });
  expect(verified).toMatchObject({ status: 'stopped', verification: { operation: 'pause', evidence: expect.any(Object) } });
  expect(await failures(r.org)).toHaveLength(0);
  await control(r, 'resume', 'confirmed');
  expect((await walletAndLedger(env, r.org)).consistent).toBe(true);
}, 90_000);

test('a seller that says it paused and did not (its read-back disagrees): failed at once, the line goes to a person, subscribers told', async () => {
  const r = await running('adcp-acme-sandbox');
  honest.drift = true;
  try {
    await control(r, 'pause', 'stopped');
  } finally {
    honest.drift = false;
  }
  await runDays(r, honest, 1);
  const failed = await untilFound('the pause to fail', async () => {
    const l = await lineNow(r);
    return l.verification?.state === 'failed' ? l : null;
  });
  expect(failed.status).toBe('reconciliation-required');
  expect(failed.verification!.evidence).toMatchObject({ reason: 'read-back', drift: [expect.stringMatching(/asked to pause/)] });
  const booking = await readBooking(api, r.token, r.booking.id);
  expect(booking.events.filter((e) => e.action === 'line.control_failed')).toHaveLength(1);
  const told = await failures(r.org);
  expect(told).toHaveLength(1);
  expect(told[0].body).toMatchObject({ lineId: r.lineId, operation: 'pause', reason: 'read-back' });
}, 90_000);

test('a lax seller: a stop goes as a pause it does apply, is verified by delivery, and asks a person to end the buy there', async () => {
  const r = await running('adcp-lax-sandbox');
  await runDays(r, lax, 1);
  const stopped = await control(r, 'stop', 'stopped');
  const update = lax.updates.filter((u) => u.mediaBuyId === r.mediaBuyId).at(-1)!.patch as unknown as Record<string, unknown>;
  expect(update).toMatchObject({ paused: true });
  expect(update.canceled).toBeUndefined();
  expect(stopped.verification).toMatchObject({
    operation: 'stop',
    state: 'pending',
    followUp: expect.stringMatching(new RegExp(`End media buy ${r.mediaBuyId} at the seller by hand`)),
  });
  await runDays(r, lax, 3);
  await until('the stop to be verified', async () => (await lineNow(r)).verification?.state === 'verified');
  expect((await lineNow(r)).status).toBe('stopped');

  // Ending the buy at the seller is a staff task: in the queue until someone records it done.
  await grantStaff(env.staff, 'staff-vc');
  await assignClient(env.staff, 'staff-vc', r.org);
  const staff = await env.issuer.token({ org: 'staff-org', user: 'staff-vc' });
  const queued = async () =>
    (
      (await (await api.fetch('/api/v1/internal/fulfilment/bookings', { token: staff })).json()) as { bookings: Array<{ id: string }> }
    ).bookings.map((b) => b.id);
  expect(await queued()).toContain(r.booking.id);
  const done = (body: Record<string, unknown>) =>
    post(api, staff, `/api/v1/internal/fulfilment/bookings/${r.booking.id}/lines/${r.lineId}/follow-up`, body);
  const operationId = stopped.verification!.operationId;
  const evidence = `Ended media buy ${r.mediaBuyId} in the seller's console; screenshot filed.`;
  const before = await env.db('line_operations').where({ id: operationId }).first();
  const eventsBefore = (await readBooking(api, r.token, r.booking.id)).events.length;
  // Refused, changing nothing: an unknown field, evidence too short, another operation, another tenant's staff.
  expect((await done({ operationId, evidence, extra: 1 })).status).toBe(400);
  expect((await done({ operationId, evidence: 'done' })).status).toBe(400);
  expect((await done({ operationId: randomUUID(), evidence })).status).toBe(404);
  const other = await env.issuer.token({ org: 'staff-org', user: 'staff-vc-other' });
  await grantStaff(env.staff, 'staff-vc-other');
  expect(
    (await post(api, other, `/api/v1/internal/fulfilment/bookings/${r.booking.id}/lines/${r.lineId}/follow-up`, { operationId, evidence }))
      .status,
  ).toBe(404);
  expect(await env.db('line_operations').where({ id: operationId }).first()).toEqual(before);
  expect((await readBooking(api, r.token, r.booking.id)).events).toHaveLength(eventsBefore);

  expect((await done({ operationId, evidence })).status).toBe(200);
  const after = await lineNow(r);
  expect(after.verification).toMatchObject({ operationId, followUpDone: { by: 'staff-vc', at: expect.any(String) } });
  const event = (await readBooking(api, r.token, r.booking.id)).events.find((e) => e.action === 'line.follow-up-done');
  expect(event?.detail).toMatchObject({ operationId, operation: 'stop', evidence });
  expect(await queued()).not.toContain(r.booking.id);
  // Once: a second record is a conflict.
  const again = await done({ operationId, evidence });
  expect(again.status).toBe(409);
  expect(((await again.json()) as { code: string }).code).toBe('follow_up_done');
}, 90_000);

test('a lax seller records a budget cut and keeps serving the old budget: the overspend fails the change, and the money spent is kept', async () => {
  const r = await running('adcp-lax-sandbox');
  const booking = await readBooking(api, r.token, r.booking.id);
  const amended = await api.fetch(`/api/v1/campaigns/${r.campaignId}/amendments`, {
    method: 'POST',
    token: r.token,
    headers: { 'content-type': 'application/json', 'idempotency-key': randomUUID() },
    // 1,000 over 20 days is 50 a day at the seller; cut to 120, which three days pass.
    body: JSON.stringify({ expectedVersion: booking.version, lines: [{ lineId: r.lineId, budgetMinor: 12_000 }] }),
  });
  expect(amended.status).toBe(202);
  await until('the cut to settle', async () => {
    const l = await lineNow(r);
    return l.budgetMinor === 12_000 && l.pendingOperation === null;
  });
  // The seller's read-back agrees (it recorded the cut): only its delivery tells.
  expect((await lineNow(r)).attempts.at(-1)!.drift).toEqual([]);
  await runDays(r, lax, 3);
  const failed = await untilFound('the cut to fail', async () => {
    const l = await lineNow(r);
    return l.verification?.state === 'failed' ? l : null;
  });
  expect(failed.status).toBe('reconciliation-required');
  expect(failed.verification!.evidence).toMatchObject({
    reason: 'delivered beyond the new budget',
    budgetMinor: 12_000,
    totalSpendMinor: 15_000,
  });
  // Real money spent is never hidden: the line's delivered spend is the seller's 150.
  const delivery = await api.fetch(`/api/v1/campaigns/${r.campaignId}/delivery`, { token: r.token });
  expect(((await delivery.json()) as { delivery: { lines: Array<{ spendMinor: number }> } }).delivery.lines[0]!.spendMinor).toBe(15_000);

  // A person confirms the seller still runs the old budget: the line says so again, and runs.
  const staff = await staffFor(r.org);
  const resolved = await post(api, staff, `${fulfilmentLine(r)}/resolve`, {
    expectedVersion: failed.version,
    outcome: 'not-applied',
    evidence: 'The seller’s order still carries the budget of 1,000; the cut never reached its ad server.',
  });
  expect(resolved.status).toBe(200);
  expect(await lineNow(r)).toMatchObject({ status: 'confirmed', budgetMinor: booking.lines[0]!.budgetMinor });
  expect((await walletAndLedger(env, r.org)).consistent).toBe(true);
}, 90_000);

test('a seller that ignores a cancel it was told it honours: the read-back fails the stop, nothing reads stopped while it delivers', async () => {
  const r = await running('adcp-acme-sandbox');
  honest.ignoresCancel = true;
  try {
    await control(r, 'stop', 'stopped');
  } finally {
    honest.ignoresCancel = false;
  }
  await runDays(r, honest, 2);
  const failed = await untilFound('the stop to fail', async () => {
    const l = await lineNow(r);
    return l.verification?.state === 'failed' ? l : null;
  });
  expect(failed.status).toBe('reconciliation-required');
  expect(failed.verification!.evidence).toMatchObject({ reason: 'read-back', drift: [expect.stringMatching(/asked to stop/)] });
}, 90_000);

test('races on an honest seller: the stop day’s own delivery, arriving while the stop is pending, is kept and does not fail it; a restatement after it was verified does', async () => {
  const r = await running('adcp-acme-sandbox');
  await runDays(r, honest, 1);
  const stopped = await control(r, 'stop', 'stopped');
  expect(stopped.verification).toMatchObject({ operation: 'stop', state: 'pending' });
  const stopDay = dateOnly(new Date(stopped.verification!.effectiveAt!));
  // Impressions in flight when the stop landed: the seller reports some on the stop's own day
  // (set through the seller's own comply_test_controller, over AdCP).
  const simulated = await controlSeller(honest, 'simulate_delivery', {
    media_buy_id: r.mediaBuyId,
    impressions: 800,
    reported_spend: { amount: 10, currency: 'GBP' },
    date: stopDay,
  });
  expect(simulated.simulated).toMatchObject({ date: stopDay, spend: 10 });
  await runDays(r, honest, 1);
  const seen = await lineNow(r);
  expect(seen.verification?.state).toBe('pending');
  expect(seen.status).toBe('stopped');
  // The in-flight day is delivery like any other: kept, and its spend shown.
  // The poll that carries it lands after the seller was asked: wait for its row, not for the ask.
  const stored = await untilFound('the stop day’s delivery to be stored', () =>
    env
      .db('delivery_days')
      .where({ line_id: r.lineId })
      .whereRaw('day = ?::date', [stopDay])
      .first()
      .then((row) => row ?? null),
  );
  expect(Number(stored.spend_minor)).toBeGreaterThanOrEqual(1_000);
  await runDays(r, honest, 2);
  await until('the stop to be verified', async () => (await lineNow(r)).verification?.state === 'verified');
  expect(await failures(r.org)).toHaveLength(0);

  // Days later the seller restates: it served the day after the stop after all.
  await controlSeller(honest, 'simulate_delivery', {
    media_buy_id: r.mediaBuyId,
    impressions: 4_000,
    reported_spend: { amount: 40, currency: 'GBP' },
    date: addDays(stopDay, 1),
  });
  await runDays(r, honest, 1);
  const failed = await untilFound('the restatement to fail the stop', async () => {
    const l = await lineNow(r);
    return l.verification?.state === 'failed' ? l : null;
  });
  expect(failed.status).toBe('reconciliation-required');
  expect(failed.verification!.evidence).toMatchObject({ reason: 'delivered after the stop', spentMinor: 4_000 });
  const ops = await env.db('line_operations').where({ line_id: r.lineId, kind: 'stop' });
  // Pending, verified, failed: each decided once.
  expect(ops.map((o) => [o.verification, o.verification_version])).toEqual([['failed', 3]]);
  expect(await failures(r.org)).toHaveLength(1);
  expect((await walletAndLedger(env, r.org)).consistent).toBe(true);
}, 120_000);

test('the journey on a seller that behaves as Prebid’s Sales Agent: launch, pause, resume, budget cut, stop: every failed control caught, nothing reads stopped while it delivers, the wallet whole', async () => {
  const r = await running('adcp-lax-sandbox');
  // Its bookings carry the HMAC secret Flightdeck issued it, as the Sales Agent signs its webhooks.
  const create = lax.creates.find((c) => (c.packages?.[0] as { buyer_ref?: string }).buyer_ref === r.lineId)!;
  expect((create.push_notification_config as { authentication?: { schemes: string[] } }).authentication?.schemes).toEqual(['HMAC-SHA256']);
  await runDays(r, lax, 1);

  // Pause: the Sales Agent applies it, and its delivery proves it.
  await control(r, 'pause', 'stopped');
  await runDays(r, lax, 3);
  await until('the pause to be verified', async () => (await lineNow(r)).verification?.state === 'verified');
  // A pause the seller carries out leaves nothing for a person to do there.
  await grantStaff(env.staff, 'staff-vcj');
  await assignClient(env.staff, 'staff-vcj', r.org);
  const staff = await env.issuer.token({ org: 'staff-org', user: 'staff-vcj' });
  const nothing = await post(api, staff, `/api/v1/internal/fulfilment/bookings/${r.booking.id}/lines/${r.lineId}/follow-up`, {
    operationId: (await lineNow(r)).verification!.operationId,
    evidence: 'Nothing to do at the seller, as it happens.',
  });
  expect(nothing.status).toBe(409);
  expect(((await nothing.json()) as { code: string }).code).toBe('no_follow_up');
  await control(r, 'resume', 'confirmed');
  await runDays(r, lax, 1);

  // A budget cut it records and does not serve: caught within one verification window.
  const booking = await readBooking(api, r.token, r.booking.id);
  const spentBefore = Math.round(sellerSpend(lax, r.mediaBuyId) * 100);
  const cut = spentBefore + 1_000;
  const amended = await api.fetch(`/api/v1/campaigns/${r.campaignId}/amendments`, {
    method: 'POST',
    token: r.token,
    headers: { 'content-type': 'application/json', 'idempotency-key': randomUUID() },
    body: JSON.stringify({ expectedVersion: booking.version, lines: [{ lineId: r.lineId, budgetMinor: cut }] }),
  });
  expect(amended.status).toBe(202);
  await until('the cut to settle', async () => {
    const l = await lineNow(r);
    return l.budgetMinor === cut && l.pendingOperation === null;
  });
  await runDays(r, lax, 3);
  const failed = await untilFound('the cut to fail', async () => {
    const l = await lineNow(r);
    return l.verification?.state === 'failed' ? l : null;
  });
  expect(failed).toMatchObject({ status: 'reconciliation-required', verification: { operation: 'change-budget' } });
  expect(failed.verification!.evidence).toMatchObject({ reason: 'delivered beyond the new budget', budgetMinor: cut });

  // The buyer stops the line it cannot trust: sent as a pause (no cancel path), with a task to end the buy by hand.
  const stopped = await control(r, 'stop', 'stopped');
  expect(stopped.verification).toMatchObject({ operation: 'stop', state: 'pending', followUp: expect.stringContaining(r.mediaBuyId) });
  expect(lax.updates.filter((u) => u.mediaBuyId === r.mediaBuyId).at(-1)!.patch).toMatchObject({ paused: true });
  await runDays(r, lax, 3);
  await until('the stop to be verified', async () => (await lineNow(r)).verification?.state === 'verified');

  // Nothing reads stopped while it delivers: no day after the stop carries delivery.
  const after = await env
    .db('delivery_days')
    .where({ line_id: r.lineId })
    .whereRaw('day > ?::date', [dateOnly(new Date(stopped.verification!.effectiveAt!))])
    .sum({ s: 'spend_minor' });
  expect(Number(after[0]!.s ?? 0)).toBe(0);
  const told = await failures(r.org);
  expect(told.map((e) => e.body.operation)).toEqual(['change-budget']);
  // The spend the seller delivered beyond the cut is shown, not hidden, and the wallet equals its entries.
  const delivery = await api.fetch(`/api/v1/campaigns/${r.campaignId}/delivery`, { token: r.token });
  const shown = ((await delivery.json()) as { delivery: { lines: Array<{ spendMinor: number }> } }).delivery.lines[0]!.spendMinor;
  expect(shown).toBe(Math.round(sellerSpend(lax, r.mediaBuyId) * 100));
  expect(shown).toBeGreaterThan(cut);
  expect((await walletAndLedger(env, r.org)).consistent).toBe(true);
}, 180_000);

/** What the seller's own report says the buy spent, in major units. */
function sellerSpend(seller: TestSeller, mediaBuyId: string): number {
  return (seller.delivery.get(mediaBuyId) ?? []).reduce((sum, d) => sum + d.spend, 0);
}

test('a seller that resumes a buy on its own after a pause (its test controller forces it active): its delivery fails the pause', async () => {
  const r = await running('adcp-acme-sandbox');
  await runDays(r, honest, 1);
  await control(r, 'pause', 'stopped');
  // The seller's ad server puts the buy back to active by itself; the read-back at the pause agreed.
  const forced = await controlSeller(honest, 'force_media_buy_status', { media_buy_id: r.mediaBuyId, status: 'active' });
  expect(forced).toMatchObject({ previous_state: 'paused', current_state: 'active' });
  await runDays(r, honest, 3);
  const failed = await untilFound('the pause to fail', async () => {
    const l = await lineNow(r);
    return l.verification?.state === 'failed' ? l : null;
  });
  expect(failed.status).toBe('reconciliation-required');
  expect(failed.verification!.evidence).toMatchObject({ reason: 'delivered after the pause' });
  expect(await failures(r.org)).toHaveLength(1);

  // A person finds the buy running at the seller and says so: the line reads running again, and may be paused anew.
  const staff = await staffFor(r.org);
  const resolved = await post(api, staff, `${fulfilmentLine(r)}/resolve`, {
    expectedVersion: failed.version,
    outcome: 'not-applied',
    evidence: 'The seller’s console shows the buy active and serving since the day after the pause.',
  });
  expect(resolved.status).toBe(200);
  const reopened = await lineNow(r);
  expect(reopened).toMatchObject({ status: 'confirmed', verification: { operation: 'pause', state: 'failed' } });
  const event = (await readBooking(api, r.token, r.booking.id)).events.find((e) => e.action === 'line.resolved');
  expect(event?.detail).toMatchObject({ operation: 'pause', outcome: 'not-applied', contradicted: true });
  // Once: the line is no longer waiting on a person.
  const again = await post(api, staff, `${fulfilmentLine(r)}/resolve`, {
    expectedVersion: reopened.version,
    outcome: 'applied',
    evidence: 'A second resolution of the same contradicted pause.',
  });
  expect(again.status).toBe(409);
  expect((await lineNow(r)).version).toBe(reopened.version);
  await control(r, 'pause', 'stopped');
  expect((await walletAndLedger(env, r.org)).consistent).toBe(true);
}, 90_000);

let staffCount = 0;
/** A staff member assigned to the workspace, as the fulfilment routes require. */
async function staffFor(org: string) {
  const user = `staff-vc-${++staffCount}`;
  await grantStaff(env.staff, user);
  await assignClient(env.staff, user, org);
  return env.issuer.token({ org: 'staff-org', user });
}
const fulfilmentLine = (r: Running) => `/api/v1/internal/fulfilment/bookings/${r.booking.id}/lines/${r.lineId}`;
