import { createTestEnv, json, type TestApi, type TestEnv } from '../support/api';
import { approve, draftCampaign, post, readLine, waitForBooking, type BookingBody } from '../support/bookings';
import { fundWallet, walletAndLedger } from '../support/wallet';
import { makeCreative } from '../support/creatives';
import { subscribe } from '../support/webhooks';
import { assignClient, grantStaff } from '../../shared/staff/staff-store';
import type { BookingLine } from '../../shared/bookings/booking-schemas';

/**
 * Verified control on a workflow supplier (docs/bookings.md): staff carry the pause to the
 * supplier and confirm it; the supplier's own figures, entered by staff, then show whether it
 * happened. Delivery after the pause fails it, and the line goes to a person.
 */
let env: TestEnv;
let api: TestApi;
let staff: string;
const ORG = 'org-vcw';
beforeAll(async () => {
  env = await createTestEnv();
  api = await env.api();
  await env.workers({ WORKER_QUEUES: 'suppliers' });
  await grantStaff(env.staff, 'staff-vcw');
  await assignClient(env.staff, 'staff-vcw', ORG);
  staff = await env.issuer.token({ org: 'staff-org', user: 'staff-vcw' });
});
afterAll(() => env.close());

/** Staff claim, start (when there is something to start) and confirm the line's work in hand. */
async function work(token: string, bookingId: string, lineId: string, body: Record<string, unknown>, start = true) {
  const base = `/api/v1/internal/fulfilment/bookings/${bookingId}/lines/${lineId}`;
  const version = async () => (await readLine<BookingLine>(api, token, bookingId)).version;
  expect((await post(api, staff, `${base}/claim`, { expectedVersion: await version() })).status).toBe(200);
  if (start) expect((await post(api, staff, `${base}/start`, { expectedVersion: await version() })).status).toBe(200);
  expect((await post(api, staff, `${base}/confirm`, { expectedVersion: await version(), ...body })).status).toBe(200);
}

test('a pause staff confirmed, contradicted by the figures they enter next: failed with the evidence, the line to a person, told once', async () => {
  await fundWallet(env, ORG, 100_000);
  await subscribe(env, api, ORG, ['line.control_failed']);
  const token = await env.issuer.token({ org: ORG, user: `${ORG}-buyer` });
  const creative = await makeCreative(api, token, 'ctv');
  const { campaignId, planVersion } = await draftCampaign(
    api,
    token,
    [{ channel: 'ctv', adapterKey: 'manual', budgetMinor: 40_000, creativeIds: [creative.id] }],
    { executionMode: 'live', maximumCommitmentMinor: 40_000 },
  );
  await approve(api, token, campaignId, planVersion);
  const launch = await post(api, token, `/api/v1/campaigns/${campaignId}/launch`);
  expect(launch.status).toBe(202);
  const { booking } = await json<{ booking: BookingBody }>(launch);
  const lineId = booking.lines[0]!.id;
  await waitForBooking(api, token, booking.id, (b) => (b.lines[0] as { workflowSteps?: unknown }).workflowSteps != null);
  await work(token, booking.id, lineId, { providerReference: 'IO-7', evidence: 'Signed insertion order.' });

  const line = await readLine<BookingLine>(api, token, booking.id);
  expect((await post(api, token, `/api/v1/bookings/${booking.id}/lines/${lineId}/pause`, { expectedVersion: line.version })).status).toBe(
    202,
  );
  await waitForBooking(
    api,
    token,
    booking.id,
    (b) => b.lines[0]!.status === 'stop-requested' && (b.lines[0] as { workflowSteps?: unknown }).workflowSteps != null,
  );
  await work(token, booking.id, lineId, { evidence: 'The desk confirmed the pause by email.' });
  const paused = await readLine<BookingLine>(api, token, booking.id);
  expect(paused).toMatchObject({ status: 'stopped', verification: { operation: 'pause', state: 'pending' } });

  // The supplier's report, as staff enter it: the flight's days (all after the pause) still delivered.
  const entered = await post(api, staff, `/api/v1/internal/fulfilment/bookings/${booking.id}/lines/${lineId}/delivery`, {
    csv: 'date,impressions,clicks,completions,spend_minor\n2099-03-02,3000,30,0,300\n2099-03-03,5000,50,0,500',
  });
  expect(entered.status).toBe(200);
  const failed = await readLine<BookingLine>(api, token, booking.id);
  expect(failed).toMatchObject({
    status: 'reconciliation-required',
    verification: {
      state: 'failed',
      evidence: {
        reason: 'delivered after the pause',
        spentMinor: 800,
        toleranceMinor: 400,
        deliveredSince: [expect.anything(), expect.anything()],
      },
    },
  });
  const told = await env.db('webhook_events').where({ workspace_id: ORG, type: 'line.control_failed' });
  expect(told.map((e) => e.body)).toEqual([expect.objectContaining({ lineId, operation: 'pause', spentAfterMinor: 800 })]);
  // Entering the same figures again decides nothing twice.
  await post(api, staff, `/api/v1/internal/fulfilment/bookings/${booking.id}/lines/${lineId}/delivery`, {
    csv: 'date,impressions,clicks,completions,spend_minor\n2099-03-02,3000,30,0,300',
  });
  expect(await env.db('webhook_events').where({ workspace_id: ORG, type: 'line.control_failed' })).toHaveLength(1);
  expect((await walletAndLedger(env, ORG)).consistent).toBe(true);
}, 90_000);

test('a stop staff confirmed, then figures that show nothing served after it: verified once a full day after it is reported after the delay', async () => {
  const org = 'org-vcw2';
  await fundWallet(env, org, 100_000);
  await assignClient(env.staff, 'staff-vcw', org);
  const token = await env.issuer.token({ org, user: `${org}-buyer` });
  const creative = await makeCreative(api, token, 'ctv');
  const { campaignId, planVersion } = await draftCampaign(
    api,
    token,
    [{ channel: 'ctv', adapterKey: 'manual', budgetMinor: 40_000, creativeIds: [creative.id] }],
    { executionMode: 'live', maximumCommitmentMinor: 40_000 },
  );
  await approve(api, token, campaignId, planVersion);
  const launch = await post(api, token, `/api/v1/campaigns/${campaignId}/launch`);
  const { booking } = await json<{ booking: BookingBody }>(launch);
  const lineId = booking.lines[0]!.id;
  await waitForBooking(api, token, booking.id, (b) => (b.lines[0] as { workflowSteps?: unknown }).workflowSteps != null);
  await work(token, booking.id, lineId, { providerReference: 'IO-8', evidence: 'Signed insertion order.' });
  const line = await readLine<BookingLine>(api, token, booking.id);
  expect((await post(api, token, `/api/v1/bookings/${booking.id}/lines/${lineId}/stop`, { expectedVersion: line.version })).status).toBe(
    202,
  );
  await waitForBooking(
    api,
    token,
    booking.id,
    (b) => b.lines[0]!.status === 'stop-requested' && (b.lines[0] as { workflowSteps?: unknown }).workflowSteps != null,
  );
  await work(token, booking.id, lineId, { evidence: 'The desk confirmed the stop by email.' });
  const stopped = await readLine<BookingLine>(api, token, booking.id);
  expect(stopped).toMatchObject({ status: 'stopped', verification: { operation: 'stop', state: 'pending' } });

  const enter = (csv: string) => post(api, staff, `/api/v1/internal/fulfilment/bookings/${booking.id}/lines/${lineId}/delivery`, { csv });
  const silent = 'date,impressions,clicks,completions,spend_minor\n2099-03-02,0,0,0,0\n2099-03-03,0,0,0,0';
  // Reported at once, nothing served: not yet proven, since no full day after the stop has passed.
  expect((await enter(silent)).status).toBe(200);
  expect((await readLine<BookingLine>(api, token, booking.id)).verification?.state).toBe('pending');
  // Three days on (the stop's recorded time moved back as the days would), the same report proves it.
  await env
    .db('line_operations')
    .where({ id: stopped.verification!.operationId })
    .update({ effective_at: env.db.raw("now() - interval '3 days'") });
  expect((await enter(silent)).status).toBe(200);
  const verified = await readLine<BookingLine>(api, token, booking.id);
  expect(verified).toMatchObject({
    status: 'stopped',
    verification: { state: 'verified', evidence: { reason: 'delivery after the change agrees' } },
  });
  expect(await env.db('webhook_events').where({ workspace_id: org, type: 'line.control_failed' })).toHaveLength(0);
  expect((await walletAndLedger(env, org)).consistent).toBe(true);
}, 90_000);
