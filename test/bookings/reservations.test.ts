import { createTestEnv, json, type TestApi, type TestEnv } from '../support/api';
import { approve, draftCampaign, post, waitForBooking, type BookingBody } from '../support/bookings';
import { approvedCreative, makeCreative } from '../support/creatives';
import { assignClient, grantStaff } from '../../shared/staff/staff-store';
import { fundWallet, walletAndLedger } from '../support/wallet';
import { SYSTEM } from '../../shared/auth/actor';
import { stepLine } from '../../shared/bookings/lines/store';

let env: TestEnv;
let api: TestApi;
beforeAll(async () => {
  env = await createTestEnv();
  api = await env.api({ RATE_LIMIT_MAX: '100000' });
  await env
    .db('supplier_credentials')
    .insert({ adapter_key: 'live-ctv', advertiser_id: null, secret_ref: 'vault:live-ctv', approved_at: new Date() });
});
afterAll(() => env.close());

const wallet = async (org: string) => env.db('wallets').where({ advertiser_id: org }).first();

const liveCreative = (token: string) => approvedCreative(api, env.db, token);

async function liveLaunch(org: string, lines: Array<Record<string, unknown>>, commitment: number) {
  const token = await env.issuer.token({ org, user: `${org}-buyer` });
  const { campaignId, planVersion } = await draftCampaign(api, token, lines as never, {
    executionMode: 'live',
    maximumCommitmentMinor: commitment,
  });
  await approve(api, token, campaignId, planVersion);
  const res = await post(api, token, `/api/v1/campaigns/${campaignId}/launch`);
  expect(res.status).toBe(202);
  return { token, booking: (await json<{ booking: BookingBody }>(res)).booking };
}

/** A funded advertiser's booking of one live ctv line, launched with no worker running. */
async function oneLiveLine(org: string, budgetMinor: number, commitment: number) {
  await fundWallet(env, org, 100_000);
  const token = await env.issuer.token({ org, user: `${org}-buyer` });
  const line = { channel: 'ctv', adapterKey: 'live-ctv', budgetMinor, creativeIds: [await liveCreative(token)] };
  return liveLaunch(org, [line], commitment);
}

describe('live reservations settle with the booking', () => {
  test('a booking whose every line is rejected gives its whole reservation back', async () => {
    const { booking, token } = await oneLiveLine('org-r1', 50_000, 60_000);
    expect((await wallet('org-r1')).reserved_minor).toBe('60000');
    // Workers start only now, so the reservation above cannot race the line's rejection.
    const workers = await env.workers();
    await waitForBooking(api, token, booking.id, (b) => b.status === 'rejected');
    expect((await wallet('org-r1')).reserved_minor).toBe('0');
    // The line's budget goes back when it is rejected, the rest of the commitment when the booking settles.
    const entries = await env.db('wallet_entries').where({ booking_id: booking.id }).orderBy('id');
    expect(entries.map((e) => [e.kind, e.subject_type, e.amount_minor])).toEqual([
      ['reservation', 'booking', '60000'],
      ['release', 'line', '50000'],
      ['release', 'booking', '10000'],
    ]);
    expect((await walletAndLedger(env, 'org-r1')).consistent).toBe(true);
    await workers.close();
  });

  test('a partially confirmed booking spends the confirmed line, gives back the rejected one and the unspent headroom', async () => {
    await fundWallet(env, 'org-r2', 100_000);
    const token = await env.issuer.token({ org: 'org-r2', user: 'org-r2-buyer' });
    const workers = await env.workers({ WORKER_QUEUES: 'supplier.live-ctv,supplier.manual' });
    const manualCreative = await makeCreative(api, token, 'ctv');
    const { booking } = await liveLaunch(
      'org-r2',
      [
        { channel: 'ctv', adapterKey: 'live-ctv', budgetMinor: 30_000, creativeIds: [await liveCreative(token)] },
        { channel: 'ctv', adapterKey: 'manual', budgetMinor: 10_000, creativeIds: [manualCreative.id] },
      ],
      80_000,
    );
    // The manual line's worker has handed it to staff too (it changes the line's version).
    await waitForBooking(api, token, booking.id, (b) => b.lines[0]!.status === 'rejected' && b.lines[1]!.workflowSteps != null);
    // Staff book the manual line by hand.
    await grantStaff(env.staff, 'stan');
    await assignClient(env.staff, 'stan', 'org-r2');
    const staff = await env.issuer.token({ org: 'staff', user: 'stan' });
    const line = booking.lines[1]!;
    const base = `/api/v1/internal/fulfilment/bookings/${booking.id}/lines/${line.id}`;
    let version = (await env.db('booking_lines').where({ id: line.id }).first()).version;
    expect((await post(api, staff, `${base}/claim`, { expectedVersion: version++ })).status).toBe(200);
    expect((await post(api, staff, `${base}/start`, { expectedVersion: version++ })).status).toBe(200);
    expect(
      (
        await post(api, staff, `${base}/confirm`, {
          expectedVersion: version,
          providerReference: 'IO-77',
          evidence: 'Signed insertion order IO-77 received.',
        })
      ).status,
    ).toBe(200);
    const settled = await waitForBooking(api, token, booking.id, (b) => b.status === 'partially-confirmed');
    expect(settled.status).toBe('partially-confirmed');
    // 80000 reserved: the confirmed line keeps its 10000 until it delivers (spend is captured from
    // delivery), its rejected sibling's 30000 and the 40000 headroom go back.
    expect(await wallet('org-r2')).toMatchObject({ balance_minor: '100000', reserved_minor: '10000' });
    const entries = await env.db('wallet_entries').where({ advertiser_id: 'org-r2' }).whereNot('kind', 'adjustment').orderBy('id');
    expect(entries.map((e) => [e.kind, e.amount_minor])).toEqual([
      ['reservation', '80000'],
      ['release', '30000'],
      ['release', '40000'],
    ]);
    expect((await walletAndLedger(env, 'org-r2')).consistent).toBe(true);
    await workers.close();
  });

  test('a live line stepped as one statement moves its money in the same transaction, or nothing at all', async () => {
    const { booking } = await oneLiveLine('org-r3', 20_000, 25_000);
    const lineId = booking.lines[0]!.id;
    const step = { bookingId: booking.id, lineId, actor: SYSTEM };
    expect(await stepLine(env.db, { ...step, from: 'queued', to: 'in-progress', action: 'line.attempt-started' })).not.toBeNull();

    // The confirmation's capture fails inside its transaction: the line stays where it was.
    const before = await env.db('wallet_entries').where({ booking_id: booking.id }).count({ n: '*' });
    await expect(
      env.db.transaction(async (trx) => {
        await stepLine(trx, { ...step, from: 'in-progress', to: 'confirmed', action: 'line.confirmed' });
        throw new Error('the money could not move');
      }),
    ).rejects.toThrow('the money could not move');
    expect(await env.db('booking_lines').where({ id: lineId }).first('status')).toEqual({ status: 'in-progress' });
    expect(await env.db('wallet_entries').where({ booking_id: booking.id }).count({ n: '*' })).toEqual(before);

    // Outside a transaction a live line's outcome is not written at all: its money could not move with it.
    expect(await stepLine(env.db, { ...step, from: 'in-progress', to: 'confirmed', action: 'line.confirmed' })).toBeNull();
    expect(await env.db('booking_lines').where({ id: lineId }).first('status')).toEqual({ status: 'in-progress' });

    await env.db.transaction((trx) => stepLine(trx, { ...step, from: 'in-progress', to: 'confirmed', action: 'line.confirmed' }));
    const entries = await env.db('wallet_entries').where({ advertiser_id: 'org-r3' }).whereNot('kind', 'adjustment').orderBy('id');
    // The line keeps its budget reserved until it delivers; the booking settled confirmed gives the headroom back.
    expect(entries.map((e) => [e.kind, e.amount_minor])).toEqual([
      ['reservation', '25000'],
      ['release', '5000'],
    ]);
    expect((await env.db('bookings').where({ id: booking.id }).first('status')).status).toBe('confirmed');
    expect((await walletAndLedger(env, 'org-r3')).consistent).toBe(true);
  });
});
