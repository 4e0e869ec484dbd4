import { randomUUID } from 'node:crypto';
import { createTestEnv, json, type TestApi, type TestEnv } from '../support/api';
import { launchPlan, post, type BookingBody } from '../support/bookings';
import { assignClient, grantStaff, revokeStaff } from '../../shared/staff/staff-store';

const OFFICIAL = 'https://sandbox-suppliers.flightdeck.dev/ctv/rate-card';
const EVIDENCE = 'Evidence from the supplier desk.';

let env: TestEnv;
let api: TestApi;
const t: Record<string, string> = {};
let cu: { booking: BookingBody; campaignId: string };
let manual: { booking: BookingBody; campaignId: string };
beforeAll(async () => {
  env = await createTestEnv();
  api = await env.api({ RATE_LIMIT_MAX: '100000' });
  for (const [user, org] of [
    ['bj-staff', 'org-a'],
    ['bj-staff-2', 'org-a'],
    ['bj-revoked', 'org-a'],
    ['bj-other', 'org-b'],
  ] as const) {
    await grantStaff(env.staff, user);
    await assignClient(env.staff, user, org);
    t[user] = await env.issuer.token({ org: 'staff-org', user });
  }
  await revokeStaff(env.staff, 'bj-revoked');
  t.agent = await env.issuer.token({ org: 'staff-org', user: 'bj-staff', agent: 'bot' });
  t.customer = await env.issuer.token({ org: 'org-a', user: 'org-a-buyer', permissions: ['operator:reconcile'] });
  cu = await launchComputerUse();
  manual = await launchPlan(env, api, [{ channel: 'ctv', adapterKey: 'manual', budgetMinor: 10_000 }]);
});
afterAll(() => env.close());

const launchComputerUse = () => launchPlan(env, api, [{ channel: 'dooh', adapterKey: 'computer-use', budgetMinor: 20_000 }]);
const jobsPath = (advertiserId: string, campaignId: string) =>
  `/api/v1/internal/fulfilment/clients/${advertiserId}/campaigns/${campaignId}/browser-jobs`;
const bodyFor = (booking: BookingBody, over: Record<string, unknown> = {}) => ({
  channelCampaignId: booking.lines[0]!.channelCampaignId,
  purpose: 'observe',
  supplierUrl: OFFICIAL,
  expectedSnapshotDigest: booking.snapshotDigest,
  readOnlyConfirmed: true,
  ...over,
});
const record = (target: { booking: BookingBody; campaignId: string }, over: Record<string, unknown> = {}, token = t['bj-staff']!) =>
  post(api, token, jobsPath('org-a', target.campaignId), bodyFor(target.booking, over));
const lineOp = async (token: string, booking: BookingBody, name: string, body: Record<string, unknown> = {}) => {
  const line = await env.db('booking_lines').where({ id: booking.lines[0]!.id }).first('version');
  const path = `/api/v1/internal/fulfilment/bookings/${booking.id}/lines/${booking.lines[0]!.id}/${name}`;
  const res = await post(api, token, path, { expectedVersion: line.version, ...body });
  expect(res.status).toBe(200);
};
const count = async (table: string) => Number((await env.db(table).count({ n: '*' }))[0]!.n);
/** Everything a browser job must not touch, plus the jobs recorded so far. */
async function world() {
  const lines = await env.db('booking_lines').orderBy('id').select('id', 'version', 'status', 'claimed_by', 'provider_attempt_id');
  const bookings = await env.db('bookings').orderBy('id').select('id', 'version', 'status');
  return {
    lines,
    bookings,
    outbox: await count('outbox'),
    events: await count('booking_events'),
    attempts: await env.db('supplier_attempts').orderBy('id').select('id', 'status'),
    ledger: await count('sandbox_ledger'),
    jobs: await count('browser_jobs'),
  };
}
async function expectRefused(res: Response, status: number, code?: string) {
  expect(res.status).toBe(status);
  expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
  if (code) expect(await json(res)).toMatchObject({ status, code });
}

describe('observe', () => {
  test.each([[OFFICIAL], ['https://rates.sandbox-suppliers.flightdeck.dev/dooh?flight=2027-03']])(
    'observing the official source %s is recorded (201) and queues nothing',
    async (supplierUrl) => {
      const before = await world();
      const res = await record(cu, { supplierUrl });
      expect(res.status).toBe(201);
      const { browserJob } = await json<{ browserJob: Record<string, unknown> }>(res);
      expect(browserJob).toMatchObject({
        id: expect.stringMatching(/^[0-9a-f-]{36}$/),
        purpose: 'observe',
        supplierUrl,
        bookingId: cu.booking.id,
        lineId: cu.booking.lines[0]!.id,
        channelCampaignId: cu.booking.lines[0]!.channelCampaignId,
        status: 'recorded',
        queued: false,
        createdAt: expect.any(String),
      });
      const row = await env.db('browser_jobs').where({ id: browserJob.id }).first();
      expect(row).toMatchObject({ purpose: 'observe', supplier_url: supplierUrl, requested_by: 'bj-staff', advertiser_id: 'org-a' });
      expect(await world()).toEqual({ ...before, jobs: before.jobs + 1 });
    },
  );

  test.each([
    ['plain http', 'http://sandbox-suppliers.flightdeck.dev/ctv/rate-card'],
    ['another host', 'https://example.com/rate-card'],
    ['a look-alike suffix', 'https://sandbox-suppliers.flightdeck.dev.example.com/'],
    ['a look-alike prefix', 'https://evilsandbox-suppliers.flightdeck.dev/'],
    ['credentials that disguise the host', 'https://sandbox-suppliers.flightdeck.dev@example.com/'],
    ['an ftp URL', 'ftp://sandbox-suppliers.flightdeck.dev/'],
  ])('observing %s is refused with 422 unofficial_source and nothing is recorded', async (_name, supplierUrl) => {
    const before = await world();
    await expectRefused(await record(cu, { supplierUrl }), 422, 'unofficial_source');
    expect(await world()).toEqual(before);
  });
});

describe('the request body', () => {
  test.each([
    ['readOnlyConfirmed false', { readOnlyConfirmed: false }],
    ['readOnlyConfirmed missing', { readOnlyConfirmed: undefined }],
    ['readOnlyConfirmed as a string', { readOnlyConfirmed: 'true' }],
    ['a malformed digest', { expectedSnapshotDigest: 'abc123' }],
    ['an upper-case digest', { expectedSnapshotDigest: 'A'.repeat(64) }],
    ['a 65-character digest', { expectedSnapshotDigest: 'a'.repeat(65) }],
    ['a supplierUrl of 2001 characters', { supplierUrl: `${OFFICIAL}?q=${'x'.repeat(2001 - OFFICIAL.length - 3)}` }],
    ['a supplierUrl that is not a URL', { supplierUrl: 'sandbox-suppliers.flightdeck.dev/ctv' }],
    ['an unknown purpose', { purpose: 'purchase' }],
    ['an empty channelCampaignId', { channelCampaignId: '' }],
    ['an unknown field', { headless: true }],
  ])('%s is refused with 400 and nothing is recorded', async (_name, over) => {
    const before = await world();
    await expectRefused(await record(cu, over), 400, 'validation_failed');
    expect(await world()).toEqual(before);
  });

  test('a supplierUrl of exactly 2000 characters is accepted', async () => {
    const supplierUrl = `${OFFICIAL}?q=${'x'.repeat(2000 - OFFICIAL.length - 3)}`;
    expect(supplierUrl).toHaveLength(2000);
    expect((await record(cu, { supplierUrl })).status).toBe(201);
  });

  test("an expectedSnapshotDigest that is not the booking's is refused with 409 and nothing is recorded", async () => {
    const before = await world();
    const other = cu.booking.snapshotDigest.replace(/^./, (c) => (c === '0' ? '1' : '0'));
    await expectRefused(await record(cu, { expectedSnapshotDigest: other }), 409);
    await expectRefused(await record(cu, { expectedSnapshotDigest: manual.booking.snapshotDigest }), 409);
    expect(await world()).toEqual(before);
  });
});

describe('prepare', () => {
  test("preparing a computer-use line needs the caller's claim and the started line with its in-flight attempt", async () => {
    const target = await launchComputerUse();
    const prepare = (token = t['bj-staff']!) => record(target, { purpose: 'prepare' }, token);
    const before = await world();
    await expectRefused(await prepare(), 409, 'claim_required');

    await lineOp(t['bj-staff-2']!, target.booking, 'claim');
    let snapshot = await world();
    await expectRefused(await prepare(), 409, 'claim_required');
    await expectRefused(await prepare(t['bj-staff-2']), 409, 'attempt_not_in_flight');
    expect(await world()).toEqual(snapshot);
    expect(snapshot.jobs).toBe(before.jobs);

    await lineOp(t['bj-staff-2']!, target.booking, 'start');
    snapshot = await world();
    await expectRefused(await prepare(), 409, 'claim_required');
    await expectRefused(await record(target, { purpose: 'prepare', supplierUrl: 'https://example.com/' }, t['bj-staff-2']), 422);
    expect(await world()).toEqual(snapshot);

    const res = await prepare(t['bj-staff-2']);
    expect(res.status).toBe(201);
    const { browserJob } = await json<{ browserJob: Record<string, unknown> }>(res);
    expect(browserJob).toMatchObject({ purpose: 'prepare', status: 'recorded', queued: false, lineId: target.booking.lines[0]!.id });
    expect(await world()).toEqual({ ...snapshot, jobs: snapshot.jobs + 1 });
  });

  test('a line no longer in flight (marked uncertain, or confirmed) cannot be prepared', async () => {
    const uncertain = await launchComputerUse();
    await lineOp(t['bj-staff']!, uncertain.booking, 'claim');
    await lineOp(t['bj-staff']!, uncertain.booking, 'start');
    await lineOp(t['bj-staff']!, uncertain.booking, 'uncertain', { evidence: EVIDENCE });
    const confirmed = await launchComputerUse();
    await lineOp(t['bj-staff']!, confirmed.booking, 'claim');
    await lineOp(t['bj-staff']!, confirmed.booking, 'start');
    await lineOp(t['bj-staff']!, confirmed.booking, 'confirm', { providerReference: 'IO-7', evidence: EVIDENCE });
    const before = await world();
    await expectRefused(await record(uncertain, { purpose: 'prepare' }), 409, 'attempt_not_in_flight');
    await expectRefused(await record(confirmed, { purpose: 'prepare' }), 409, 'attempt_not_in_flight');
    expect(await world()).toEqual(before);
  });

  test('a manual line cannot be prepared in a browser (422), even when claimed and started by the caller', async () => {
    const target = await launchPlan(env, api, [{ channel: 'ctv', adapterKey: 'manual', budgetMinor: 10_000 }]);
    await expectRefused(await record(target, { purpose: 'prepare' }), 422);
    await lineOp(t['bj-staff']!, target.booking, 'claim');
    await lineOp(t['bj-staff']!, target.booking, 'start');
    const before = await world();
    await expectRefused(await record(target, { purpose: 'prepare' }), 422, 'not_computer_use');
    expect(await world()).toEqual(before);
  });
});

describe('who may record a browser job', () => {
  test.each([
    ["the client's own customer", 'customer'],
    ['a delegated agent acting for a staff member', 'agent'],
    ['a staff member not assigned to the client', 'bj-other'],
    ['a revoked staff member', 'bj-revoked'],
  ])('%s gets 404 and nothing is recorded', async (_who, key) => {
    const before = await world();
    await expectRefused(await record(cu, {}, t[key]!), 404, 'not_found');
    await expectRefused(await record(cu, { purpose: 'prepare' }, t[key]!), 404, 'not_found');
    expect(await world()).toEqual(before);
  });

  test('a campaign or line the path does not name gets 404 and nothing is recorded', async () => {
    const foreign = await launchPlan(env, api, [{ channel: 'ctv', adapterKey: 'computer-use', budgetMinor: 10_000 }], 'org-b');
    const before = await world();
    const staff = t['bj-staff']!;
    const cases: Array<[string, string, Record<string, unknown>]> = [
      ['org-b', cu.campaignId, bodyFor(cu.booking)],
      ['org-b', foreign.campaignId, bodyFor(foreign.booking)],
      ['org-a', foreign.campaignId, bodyFor(foreign.booking)],
      ['org-a', randomUUID(), bodyFor(cu.booking)],
      ['org-a', 'not-a-uuid', bodyFor(cu.booking)],
      ['org-a', manual.campaignId, bodyFor(cu.booking)],
      ['org-a', cu.campaignId, bodyFor(cu.booking, { channelCampaignId: 'cc-unknown' })],
    ];
    for (const [advertiserId, campaignId, body] of cases) {
      await expectRefused(await post(api, staff, jobsPath(advertiserId, campaignId), body), 404, 'not_found');
    }
    // The same request from the staff member assigned to org-b is recorded: the 404s were about access, not the request.
    expect((await post(api, t['bj-other']!, jobsPath('org-b', foreign.campaignId), bodyFor(foreign.booking))).status).toBe(201);
    expect(await world()).toEqual({ ...before, jobs: before.jobs + 1 });
  });
});
