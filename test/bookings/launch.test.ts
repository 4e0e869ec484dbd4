import { fundWallet } from '../support/wallet';
import { createTestEnv, json, type TestApi, type TestEnv } from '../support/api';
import {
  approve,
  draftCampaign,
  launchPlan,
  post,
  readBooking,
  sevenSandboxLines,
  waitForBooking,
  type BookingBody,
} from '../support/bookings';
import { makeCreative } from '../support/creatives';
import { bookLineJobId } from '../../shared/queues/jobs';

let env: TestEnv;
let api: TestApi;
beforeAll(async () => {
  env = await createTestEnv();
  api = await env.api();
});
afterAll(() => env.close());

const count = async (table: string, where: Record<string, unknown> = {}) =>
  Number((await env.db(table).where(where).count({ n: '*' }))[0]!.n);

async function approved(org: string, lines = sevenSandboxLines(), over: Record<string, unknown> = {}) {
  const token = await env.issuer.token({ org, user: `${org}-buyer` });
  const d = await draftCampaign(api, token, lines, over);
  const plan = await approve(api, token, d.campaignId, d.planVersion);
  return { token, ...d, digest: plan.approvedDigest };
}

const BOOKING_FIELDS = [
  'state',
  'id',
  'advertiserId',
  'campaignId',
  'campaignName',
  'client',
  'campaignStatus',
  'closeoutPending',
  'flightEnded',
  'overdue',
  'version',
  'status',
  'submittedAt',
  'confirmationDueAt',
  'startDate',
  'endDate',
  'executionMode',
  'mediaBudgetMinor',
  'maximumCommitmentMinor',
  'currency',
  'snapshotDigest',
  'lines',
  'events',
];
const LINE_FIELDS = [
  'state',
  'id',
  'channelCampaignId',
  'adapterKey',
  'channel',
  'budgetMinor',
  'executionMode',
  'version',
  'status',
  'executionMethod',
  'providerReference',
  'evidence',
  'claimedBy',
  'assignedToUserId',
  'assignedAt',
  'startedAt',
  'confirmedAt',
  'providerAttemptId',
  'creatives',
];

describe('POST /api/v1/campaigns/{id}/launch', () => {
  test('a seven-channel sandbox plan is booked (202, every line queued), then each line is confirmed exactly once by its supplier', async () => {
    const workers = await env.workers({ OUTBOX_RELAY_INTERVAL_MS: '60000' });
    const { token, campaignId, digest } = await approved('org-seven');
    const res = await post(api, token, `/api/v1/campaigns/${campaignId}/launch`);
    expect(res.status).toBe(202);
    const { booking } = await json<{ booking: BookingBody }>(res);
    for (const f of BOOKING_FIELDS) expect(booking).toHaveProperty(f);
    for (const f of LINE_FIELDS) expect(booking.lines[0]).toHaveProperty(f);
    expect(booking).toMatchObject({
      status: 'queued',
      executionMode: 'sandbox',
      currency: 'GBP',
      snapshotDigest: digest,
      client: { id: 'org-seven', name: 'Acme Drinks' },
      campaignStatus: 'booked',
    });
    expect(booking.lines.map((l) => [l.channel, l.status])).toEqual(sevenSandboxLines().map((l) => [l.channel, 'queued']));
    expect(booking.events.map((e) => e.action)).toEqual(['booking.launched', ...Array(7).fill('line.queued')]);

    // The relay interval is a minute: only the API's own relay after commit can have queued these.
    const done = await waitForBooking(api, token, booking.id, (b) => b.status === 'confirmed');
    expect(done.lines.every((l) => l.status === 'confirmed' && l.providerReference && l.providerAttemptId)).toBe(true);
    const ledger = await env.db('sandbox_ledger').whereIn(
      'line_id',
      done.lines.map((l) => l.id),
    );
    expect(ledger).toHaveLength(7);
    // The request relayed its own outbox rows and marked them so: nothing is left for the workers' relay.
    const rows = await env.db('outbox').whereIn(
      'job_id',
      done.lines.map((l) => bookLineJobId(l.id)),
    );
    expect(rows).toHaveLength(7);
    expect(rows.every((r) => r.relayed_at !== null)).toBe(true);
    expect(ledger.map((r) => r.idempotency_key).sort()).toEqual(done.lines.map((l) => l.providerAttemptId).sort());
    const actions = done.events.map((e) => e.action);
    expect(actions.filter((a) => a === 'line.attempt-started')).toHaveLength(7);
    expect(actions.filter((a) => a === 'line.confirmed')).toHaveLength(7);
    expect(actions.at(-1)).toBe('booking.status-changed');
    expect(done.events.find((e) => e.action === 'line.confirmed')).toMatchObject({ actor: 'system', source: 'system' });
    await workers.close();
  });

  test('the launch answer is the booking exactly as a read of it gives, lines and events in order', async () => {
    const { token, campaignId } = await approved('org-answer');
    const res = await post(api, token, `/api/v1/campaigns/${campaignId}/launch`);
    expect(res.status).toBe(202);
    const { booking } = await json<{ booking: BookingBody }>(res);
    // No workers run in this file outside the first test: nothing moves between the answer and the read.
    expect(await readBooking(api, token, booking.id)).toEqual(booking);
    const again = await post(api, token, `/api/v1/campaigns/${campaignId}/launch`);
    expect(again.status).toBe(200);
    expect((await json<{ booking: BookingBody }>(again)).booking).toEqual(booking);
  });

  test('launching the same approved snapshot again returns the first booking (200) and books nothing new, even when launches race', async () => {
    const { token, campaignId } = await approved('org-race');
    const results = await Promise.all(Array.from({ length: 6 }, () => post(api, token, `/api/v1/campaigns/${campaignId}/launch`)));
    const statuses = results.map((r) => r.status).sort();
    expect(statuses).toEqual([200, 200, 200, 200, 200, 202]);
    const ids = new Set(await Promise.all(results.map(async (r) => (await json<{ booking: { id: string } }>(r)).booking.id)));
    expect(ids.size).toBe(1);
    expect(await count('bookings', { campaign_id: campaignId })).toBe(1);
    expect(await count('outbox', {})).toBeGreaterThanOrEqual(7);
    const bookingId = [...ids][0]!;
    expect(await count('booking_lines', { booking_id: bookingId })).toBe(7);
  });

  test('a plan that is not approved cannot launch (409) and nothing is created', async () => {
    const token = await env.issuer.token({ org: 'org-draft' });
    const { campaignId } = await draftCampaign(api, token, sevenSandboxLines());
    const outbox = await count('outbox');
    const res = await post(api, token, `/api/v1/campaigns/${campaignId}/launch`);
    expect(res.status).toBe(409);
    expect(await json(res)).toMatchObject({ code: 'plan_not_approved' });
    expect(await count('bookings', { campaign_id: campaignId })).toBe(0);
    expect(await count('outbox')).toBe(outbox);
  });

  test('a campaign changed after approval cannot launch (409) and nothing is created', async () => {
    const { token, campaignId } = await approved('org-changed');
    await env.db('campaigns').where({ id: campaignId }).update({ maximum_commitment_minor: 99_999_999 });
    const res = await post(api, token, `/api/v1/campaigns/${campaignId}/launch`);
    expect(res.status).toBe(409);
    expect(await json(res)).toMatchObject({ code: 'snapshot_changed' });
    expect(await count('bookings', { campaign_id: campaignId })).toBe(0);
  });

  test('a body with any field is a 400, and another tenant gets 404; neither creates anything', async () => {
    const { token, campaignId } = await approved('org-strict');
    expect((await post(api, token, `/api/v1/campaigns/${campaignId}/launch`, { mode: 'live' })).status).toBe(400);
    expect((await post(api, token, `/api/v1/campaigns/${campaignId}/launch`, [])).status).toBe(400);
    const stranger = await env.issuer.token({ org: 'org-stranger' });
    expect((await post(api, stranger, `/api/v1/campaigns/${campaignId}/launch`)).status).toBe(404);
    expect((await post(api, token, `/api/v1/campaigns/00000000-0000-4000-8000-000000000000/launch`)).status).toBe(404);
    expect(await count('bookings', { campaign_id: campaignId })).toBe(0);
    // An empty object is an empty body.
    expect((await post(api, token, `/api/v1/campaigns/${campaignId}/launch`, {})).status).toBe(202);
  });
});

describe('live launches', () => {
  const live = { executionMode: 'live', maximumCommitmentMinor: 60_000 };
  let liveLines: Array<{ channel: string; adapterKey: string; budgetMinor: number; creativeIds?: string[] }> = [];

  /** A live line whose creative live-ctv has approved (the approval a supplier review would have recorded). */
  async function approvedLiveLines(org: string) {
    const token = await env.issuer.token({ org, user: `${org}-buyer` });
    const creative = await makeCreative(api, token, 'ctv');
    await env.db('creative_approvals').insert({
      id: crypto.randomUUID(),
      creative_id: creative.id,
      version: creative.version,
      adapter_key: 'live-ctv',
      asset_fingerprint: creative.assetFingerprint,
      metadata_digest: creative.metadataDigest,
      review_id: crypto.randomUUID(),
    });
    liveLines = [{ channel: 'ctv', adapterKey: 'live-ctv', budgetMinor: 60_000, creativeIds: [creative.id] }];
    return liveLines;
  }

  test('without approved supplier access, a live launch is refused with 422 and nothing is reserved or booked', async () => {
    const { token, campaignId } = await approved('org-live-noaccess', await approvedLiveLines('org-live-noaccess'), live);
    await fundWallet(env, 'org-live-noaccess', 1_000_000);
    const res = await post(api, token, `/api/v1/campaigns/${campaignId}/launch`);
    expect(res.status).toBe(422);
    expect(await json(res)).toMatchObject({ code: 'supplier_access_required' });
    expect(await count('bookings', { campaign_id: campaignId })).toBe(0);
    expect((await env.db('wallets').where({ advertiser_id: 'org-live-noaccess' }).first()).reserved_minor).toBe('0');
  });

  test('an unfunded live launch is refused with 409 and nothing is booked', async () => {
    await env
      .db('supplier_credentials')
      .insert({ adapter_key: 'live-ctv', advertiser_id: null, secret_ref: 'vault:live-ctv', approved_at: new Date() });
    const { token, campaignId } = await approved('org-live-poor', await approvedLiveLines('org-live-poor'), live);
    await fundWallet(env, 'org-live-poor', 59_999);
    // The reservation is asked for after the booking's rows are written: they must go with it.
    const outboxBefore = await env.db('outbox').count({ n: '*' });
    const res = await post(api, token, `/api/v1/campaigns/${campaignId}/launch`);
    expect(res.status).toBe(409);
    expect(await json(res)).toMatchObject({ code: 'unfunded' });
    expect(await count('bookings', { campaign_id: campaignId })).toBe(0);
    expect(await env.db('outbox').count({ n: '*' })).toEqual(outboxBefore);
    expect((await env.db('campaigns').where({ id: campaignId }).first()).status).not.toBe('booked');
    expect((await env.db('wallets').where({ advertiser_id: 'org-live-poor' }).first()).reserved_minor).toBe('0');
  });

  test('two live launches competing for the same funds: exactly one reserves its commitment', async () => {
    const a = await approved('org-live-race', await approvedLiveLines('org-live-race'), live);
    const b = await approved('org-live-race', liveLines, { ...live, name: 'Second' });
    await fundWallet(env, 'org-live-race', 100_000);
    const [ra, rb] = await Promise.all([
      post(api, a.token, `/api/v1/campaigns/${a.campaignId}/launch`),
      post(api, b.token, `/api/v1/campaigns/${b.campaignId}/launch`),
    ]);
    expect([ra.status, rb.status].sort()).toEqual([202, 409]);
    const wallet = await env.db('wallets').where({ advertiser_id: 'org-live-race' }).first();
    expect(wallet.reserved_minor).toBe('60000');
    expect(await count('wallet_reservations', { advertiser_id: 'org-live-race' })).toBe(1);
  });

  test('a funded live line with approved access is booked; with no live connection configured it is rejected before anything is sent', async () => {
    const workers = await env.workers();
    const { token, campaignId } = await approved('org-live-ok', await approvedLiveLines('org-live-ok'), live);
    await fundWallet(env, 'org-live-ok', 60_000);
    const res = await post(api, token, `/api/v1/campaigns/${campaignId}/launch`);
    expect(res.status).toBe(202);
    const { booking } = await json<{ booking: BookingBody }>(res);
    expect(booking.executionMode).toBe('live');
    const done = await waitForBooking(api, token, booking.id, (x) => x.status === 'rejected');
    expect(done.lines[0]!.evidence).toMatch(/nothing was sent/);
    expect(await count('supplier_attempts', { line_id: done.lines[0]!.id })).toBe(0);
    await workers.close();
  });
});

describe('live creative evidence', () => {
  test('a live line without creatives, or with a creative its supplier has not approved, is refused with 422 and nothing is booked', async () => {
    await env
      .db('supplier_credentials')
      .insert({ adapter_key: 'live-tv', advertiser_id: null, secret_ref: 'vault:live-tv', approved_at: new Date() });
    await env.db('workspaces').insert({ id: 'org-live-evidence', name: 'x', pixel_key: 'px_evidence' }).onConflict('id').ignore();
    await fundWallet(env, 'org-live-evidence', 1_000_000);
    const none = await approved('org-live-evidence', [{ channel: 'tv', adapterKey: 'live-tv', budgetMinor: 1_000 }], {
      executionMode: 'live',
    });
    const r1 = await post(api, none.token, `/api/v1/campaigns/${none.campaignId}/launch`);
    expect(r1.status).toBe(422);
    expect(await json(r1)).toMatchObject({ code: 'creative_evidence_required' });
    const creative = await makeCreative(api, none.token, 'tv');
    const unreviewed = await approved(
      'org-live-evidence',
      [{ channel: 'tv', adapterKey: 'live-tv', budgetMinor: 1_000, creativeIds: [creative.id] }],
      { executionMode: 'live', name: 'B' },
    );
    const r2 = await post(api, unreviewed.token, `/api/v1/campaigns/${unreviewed.campaignId}/launch`);
    expect(r2.status).toBe(422);
    expect(await json(r2)).toMatchObject({ code: 'creative_not_approved' });
    expect(await count('bookings', { advertiser_id: 'org-live-evidence' })).toBe(0);
    expect((await env.db('wallets').where({ advertiser_id: 'org-live-evidence' }).first()).reserved_minor).toBe('0');
  });

  test('an approval of an earlier version does not count: revised metadata voids it and the live launch is refused', async () => {
    const { token } = await approved('org-live-evidence', [{ channel: 'tv', adapterKey: 'sandbox-tv', budgetMinor: 1 }], {
      name: 'warm-up',
    });
    const creative = await makeCreative(api, token, 'tv');
    await env.db('creative_approvals').insert({
      id: crypto.randomUUID(),
      creative_id: creative.id,
      version: creative.version,
      adapter_key: 'live-tv',
      asset_fingerprint: creative.assetFingerprint,
      metadata_digest: creative.metadataDigest,
      review_id: crypto.randomUUID(),
    });
    expect((await post(api, token, `/api/v1/creatives/${creative.id}/revise`, { headline: 'New line' })).status).toBe(200);
    const revised = await approved(
      'org-live-evidence',
      [{ channel: 'tv', adapterKey: 'live-tv', budgetMinor: 1_000, creativeIds: [creative.id] }],
      { executionMode: 'live', name: 'C' },
    );
    const res = await post(api, revised.token, `/api/v1/campaigns/${revised.campaignId}/launch`);
    expect(res.status).toBe(422);
    expect(await json(res)).toMatchObject({ code: 'creative_not_approved' });
    expect(await count('bookings', { campaign_id: revised.campaignId })).toBe(0);
  });
});

test('a sandbox launch reached through launchPlan needs no wallet and no credentials', async () => {
  const { booking } = await launchPlan(env, api, [{ channel: 'dooh', adapterKey: 'sandbox-dooh', budgetMinor: 500 }], 'org-nowallet');
  expect(booking.status).toBe('queued');
  expect(await count('wallets', { advertiser_id: 'org-nowallet' })).toBe(0);
});
