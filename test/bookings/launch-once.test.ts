import { createTestEnv, json, type TestApi, type TestEnv } from '../support/api';
import { approve, draftCampaign, post, waitForBooking, type BookingBody } from '../support/bookings';
import { approvedCreative } from '../support/creatives';
import { fundWallet, walletAndLedger } from '../support/wallet';

let env: TestEnv;
let api: TestApi;
beforeAll(async () => {
  env = await createTestEnv();
  api = await env.api();
  await env
    .db('supplier_credentials')
    .insert({ adapter_key: 'live-ctv', advertiser_id: null, secret_ref: 'vault:live-ctv', approved_at: new Date() });
});
afterAll(() => env.close());

const liveCreative = (token: string) => approvedCreative(api, env.db, token);

/** An approved live campaign of one line, its wallet funded. */
async function approvedLive(org: string, commitment = 60_000) {
  await fundWallet(env, org, 1_000_000);
  const token = await env.issuer.token({ org, user: `${org}-buyer` });
  const lines = [{ channel: 'ctv', adapterKey: 'live-ctv', budgetMinor: 50_000, creativeIds: [await liveCreative(token)] }];
  const { campaignId, planVersion } = await draftCampaign(api, token, lines as never, {
    executionMode: 'live',
    maximumCommitmentMinor: commitment,
  });
  await approve(api, token, campaignId, planVersion);
  return { token, campaignId, lines };
}

const launch = (token: string, campaignId: string) => post(api, token, `/api/v1/campaigns/${campaignId}/launch`);
const bookingsOf = (campaignId: string) => env.db('bookings').where({ campaign_id: campaignId });
const reservationsOf = (org: string) => env.db('wallet_entries').where({ advertiser_id: org, kind: 'reservation' });

describe('a campaign has at most one open booking', () => {
  test('10 concurrent launches of one approved plan make one booking and one reservation; the rest replay it', async () => {
    const { token, campaignId } = await approvedLive('org-once');
    const answers = await Promise.all(Array.from({ length: 10 }, () => launch(token, campaignId)));
    // One launch books (202); the others find that booking and return it (200).
    expect(answers.map((r) => r.status).sort()).toEqual([200, 200, 200, 200, 200, 200, 200, 200, 200, 202]);
    const ids = await Promise.all(answers.map(async (r) => (await json<{ booking: BookingBody }>(r)).booking.id));
    expect(new Set(ids).size).toBe(1);
    expect(await bookingsOf(campaignId)).toHaveLength(1);
    expect(await reservationsOf('org-once')).toHaveLength(1);
    const { wallet, consistent } = await walletAndLedger(env, 'org-once');
    expect(wallet.reservedMinor).toBe(60_000);
    expect(consistent).toBe(true);
  });

  test('a campaign with a live booking cannot be re-planned or re-approved: 409, still one booking, the wallet unchanged', async () => {
    const { token, campaignId, lines } = await approvedLive('org-replan');
    expect((await launch(token, campaignId)).status).toBe(202);
    const before = await walletAndLedger(env, 'org-replan');

    // Editing the running campaign's plan is refused; approving it again for a second booking is too.
    const replaced = await post(
      api,
      token,
      `/api/v1/campaigns/${campaignId}/plan`,
      { expectedVersion: 1, lines: [{ ...lines[0], budgetMinor: 40_000 }] },
      'PUT',
    );
    expect(replaced.status).toBe(409);
    expect(await json(replaced)).toMatchObject({ code: 'plan_locked_in_flight', recovery: 'terminal' });
    const approval = await post(api, token, `/api/v1/campaigns/${campaignId}/plan/approve`, { expectedVersion: 1 });
    expect(approval.status).toBe(409);
    expect(await json(approval)).toMatchObject({ code: 'campaign_booked', recovery: 'terminal' });
    // Launching the same approved snapshot again finds its booking.
    expect((await launch(token, campaignId)).status).toBe(200);

    expect(await bookingsOf(campaignId)).toHaveLength(1);
    expect(await reservationsOf('org-replan')).toHaveLength(1);
    expect(await walletAndLedger(env, 'org-replan')).toEqual(before);
    const plan = await env.db('plans').where({ campaign_id: campaignId }).first('status', 'version');
    expect(plan).toEqual({ status: 'approved', version: 1 });
  });

  test('once the booking is rejected, a new plan may be approved and launched', async () => {
    const { token, campaignId, lines } = await approvedLive('org-after');
    const first = await json<{ booking: BookingBody }>(await launch(token, campaignId));
    const workers = await env.workers({ WORKER_QUEUES: 'supplier.live-ctv' });
    // Live supplier access is not connected here, so the line is refused before anything is sent.
    await waitForBooking(api, token, first.booking.id, (b) => b.status === 'rejected');
    await workers.close();

    await post(
      api,
      token,
      `/api/v1/campaigns/${campaignId}/plan`,
      { expectedVersion: 1, lines: [{ ...lines[0], budgetMinor: 45_000 }] },
      'PUT',
    );
    expect((await post(api, token, `/api/v1/campaigns/${campaignId}/plan/approve`, { expectedVersion: 2 })).status).toBe(200);
    const second = await launch(token, campaignId);
    expect(second.status).toBe(202);
    expect((await json<{ booking: BookingBody }>(second)).booking.id).not.toBe(first.booking.id);
    expect(await bookingsOf(campaignId)).toHaveLength(2);
  });

  test('the database itself refuses a second open booking, whatever path writes it', async () => {
    const { token, campaignId } = await approvedLive('org-index');
    const { booking } = await json<{ booking: BookingBody }>(await launch(token, campaignId));
    const row = await env.db('bookings').where({ id: booking.id }).first();
    await expect(env.db('bookings').insert({ ...row, id: crypto.randomUUID(), snapshot_digest: 'b'.repeat(64) })).rejects.toThrow(
      /bookings_one_open_per_campaign/,
    );
  });
});
