import { randomUUID } from 'node:crypto';
import { createTestEnv, expectProblem, json, type TestApi, type TestEnv } from '../support/api';
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
describe('observe', () => {
  test.each([[OFFICIAL], ['https://rates.sandbox-suppliers.flightdeck.dev/dooh?flight=2027-03']])(
    'observing the official source %s is recorded and queued (202), and says where to read it; the booking is untouched',
    async (supplierUrl) => {
      const before = await world();
      const res = await record(cu, { supplierUrl });
      expect(res.status).toBe(202);
      const { browserJob } = await json<{ browserJob: Record<string, unknown> }>(res);
      expect(browserJob).toMatchObject({
        id: expect.stringMatching(/^[0-9a-f-]{36}$/),
        purpose: 'observe',
        supplierUrl,
        advertiserId: 'org-a',
        campaignId: cu.campaignId,
        bookingId: cu.booking.id,
        lineId: cu.booking.lines[0]!.id,
        channelCampaignId: cu.booking.lines[0]!.channelCampaignId,
        status: 'queued',
        snapshotDigest: cu.booking.snapshotDigest,
        lineTermsDigest: expect.stringMatching(/^[a-f0-9]{64}$/),
        requestedBy: 'bj-staff',
        startedAt: null,
        finishedAt: null,
        failure: null,
        evidence: null,
        href: `/api/v1/internal/fulfilment/browser-jobs/${browserJob.id}`,
        createdAt: expect.any(String),
      });
      expect(res.headers.get('location')).toBe(browserJob.href);
      const row = await env.db('browser_jobs').where({ id: browserJob.id }).first();
      expect(row).toMatchObject({ purpose: 'observe', supplier_url: supplierUrl, requested_by: 'bj-staff', advertiser_id: 'org-a' });
      // Through the outbox, like every other intent: one job on the browser-jobs queue, ids only.
      const outbox = await env.db('outbox').where({ job_id: `browser-job-${browserJob.id}` });
      expect(outbox.map((o) => [o.queue, o.job_name, o.payload])).toEqual([
        ['browser-jobs', 'browser-job', { browserJobId: browserJob.id }],
      ]);
      expect(await world()).toEqual({ ...before, jobs: before.jobs + 1, outbox: before.outbox + 1 });
      // Read back where the answer said.
      const read = await api.fetch(String(browserJob.href), { token: t['bj-staff'] });
      expect(read.status).toBe(200);
      expect((await json<{ browserJob: unknown }>(read)).browserJob).toEqual(browserJob);
    },
  );

  test.each([
    ['plain http', 'http://sandbox-suppliers.flightdeck.dev/ctv/rate-card'],
    ['another host', 'https://example.com/rate-card'],
    ['a look-alike suffix', 'https://sandbox-suppliers.flightdeck.dev.example.com/'],
    ['a look-alike prefix', 'https://evilsandbox-suppliers.flightdeck.dev/'],
    ['credentials that disguise the host', 'https://sandbox-suppliers.flightdeck.dev@example.com/'],
    ['an ftp URL', 'ftp://sandbox-suppliers.flightdeck.dev/'],
    ['loopback (a test-only allowance, off here)', 'http://127.0.0.1:8080/rate-card'],
    ['localhost', 'http://localhost/rate-card'],
    ['the cloud metadata address', 'http://169.254.169.254/latest/meta-data/'],
    ['the official host on another port', 'https://sandbox-suppliers.flightdeck.dev:8443/'],
  ])('observing %s is refused with 422 unofficial_source and nothing is recorded or queued', async (_name, supplierUrl) => {
    const before = await world();
    await expectProblem(await record(cu, { supplierUrl }), 422, 'unofficial_source');
    expect(await world()).toEqual(before);
  });

  test('an address carrying credentials is refused with 422 credentials_in_url: a browser job never signs in', async () => {
    const before = await world();
    await expectProblem(
      await record(cu, { supplierUrl: 'https://desk:secret@sandbox-suppliers.flightdeck.dev/ctv' }),
      422,
      'credentials_in_url',
    );
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
    await expectProblem(await record(cu, over), 400, 'validation_failed');
    expect(await world()).toEqual(before);
  });

  test('a supplierUrl of exactly 2000 characters is accepted', async () => {
    const supplierUrl = `${OFFICIAL}?q=${'x'.repeat(2000 - OFFICIAL.length - 3)}`;
    expect(supplierUrl).toHaveLength(2000);
    expect((await record(cu, { supplierUrl })).status).toBe(202);
  });

  test("an expectedSnapshotDigest that is not the booking's is refused with 409 and nothing is recorded", async () => {
    const before = await world();
    const other = cu.booking.snapshotDigest.replace(/^./, (c) => (c === '0' ? '1' : '0'));
    await expectProblem(await record(cu, { expectedSnapshotDigest: other }), 409);
    await expectProblem(await record(cu, { expectedSnapshotDigest: manual.booking.snapshotDigest }), 409);
    expect(await world()).toEqual(before);
  });
});

describe('prepare', () => {
  test("preparing a computer-use line needs the caller's claim and the started line with its in-flight attempt", async () => {
    const target = await launchComputerUse();
    const prepare = (token = t['bj-staff']!) => record(target, { purpose: 'prepare' }, token);
    const before = await world();
    await expectProblem(await prepare(), 409, 'claim_required');

    await lineOp(t['bj-staff-2']!, target.booking, 'claim');
    let snapshot = await world();
    await expectProblem(await prepare(), 409, 'claim_required');
    await expectProblem(await prepare(t['bj-staff-2']), 409, 'attempt_not_in_flight');
    expect(await world()).toEqual(snapshot);
    expect(snapshot.jobs).toBe(before.jobs);

    await lineOp(t['bj-staff-2']!, target.booking, 'start');
    snapshot = await world();
    await expectProblem(await prepare(), 409, 'claim_required');
    await expectProblem(await record(target, { purpose: 'prepare', supplierUrl: 'https://example.com/' }, t['bj-staff-2']), 422);
    expect(await world()).toEqual(snapshot);

    const res = await prepare(t['bj-staff-2']);
    expect(res.status).toBe(202);
    const { browserJob } = await json<{ browserJob: Record<string, unknown> }>(res);
    expect(browserJob).toMatchObject({ purpose: 'prepare', status: 'queued', lineId: target.booking.lines[0]!.id });
    const line = await env.db('booking_lines').where({ id: target.booking.lines[0]!.id }).first('provider_attempt_id');
    expect(await env.db('browser_jobs').where({ id: browserJob.id }).first('provider_attempt_id')).toEqual(line);
    expect(await world()).toEqual({ ...snapshot, jobs: snapshot.jobs + 1, outbox: snapshot.outbox + 1 });
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
    await expectProblem(await record(uncertain, { purpose: 'prepare' }), 409, 'attempt_not_in_flight');
    await expectProblem(await record(confirmed, { purpose: 'prepare' }), 409, 'attempt_not_in_flight');
    expect(await world()).toEqual(before);
  });

  test('a manual line cannot be prepared in a browser (422), even when claimed and started by the caller', async () => {
    const target = await launchPlan(env, api, [{ channel: 'ctv', adapterKey: 'manual', budgetMinor: 10_000 }]);
    await expectProblem(await record(target, { purpose: 'prepare' }), 422);
    await lineOp(t['bj-staff']!, target.booking, 'claim');
    await lineOp(t['bj-staff']!, target.booking, 'start');
    const before = await world();
    await expectProblem(await record(target, { purpose: 'prepare' }), 422, 'not_computer_use');
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
    await expectProblem(await record(cu, {}, t[key]!), 404, 'not_found');
    await expectProblem(await record(cu, { purpose: 'prepare' }, t[key]!), 404, 'not_found');
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
      await expectProblem(await post(api, staff, jobsPath(advertiserId, campaignId), body), 404, 'not_found');
    }
    // The same request from the staff member assigned to org-b is recorded: the 404s were about access, not the request.
    expect((await post(api, t['bj-other']!, jobsPath('org-b', foreign.campaignId), bodyFor(foreign.booking))).status).toBe(202);
    expect(await world()).toEqual({ ...before, jobs: before.jobs + 1, outbox: before.outbox + 1 });
  });
});

describe('reading browser jobs', () => {
  test('staff assigned to the client read a job and the booking’s jobs, newest first', async () => {
    const first = await json<{ browserJob: { id: string } }>(await record(cu));
    const second = await json<{ browserJob: { id: string } }>(await record(cu));
    const res = await api.fetch(`/api/v1/internal/fulfilment/bookings/${cu.booking.id}/browser-jobs`, { token: t['bj-staff'] });
    expect(res.status).toBe(200);
    const ids = (await json<{ browserJobs: Array<{ id: string }> }>(res)).browserJobs.map((j) => j.id);
    expect(ids.indexOf(second.browserJob.id)).toBeLessThan(ids.indexOf(first.browserJob.id));
    expect(ids.indexOf(second.browserJob.id)).toBeGreaterThanOrEqual(0);
  });

  test.each([
    ["the client's own customer", 'customer'],
    ['a delegated agent acting for a staff member', 'agent'],
    ['a staff member not assigned to the client', 'bj-other'],
    ['a revoked staff member', 'bj-revoked'],
  ])('%s gets the same 404 as for a job that never existed', async (_who, key) => {
    const { browserJob } = await json<{ browserJob: { id: string } }>(await record(cu));
    const unknown = await api.fetch(`/api/v1/internal/fulfilment/browser-jobs/${randomUUID()}`, { token: t['bj-staff'] });
    const refused = await api.fetch(`/api/v1/internal/fulfilment/browser-jobs/${browserJob.id}`, { token: t[key] });
    expect([unknown.status, refused.status]).toEqual([404, 404]);
    const strip = (b: Record<string, unknown>) => ({ ...b, requestId: undefined });
    expect(strip(await json(refused))).toEqual(strip(await json(unknown)));
    const list = await api.fetch(`/api/v1/internal/fulfilment/bookings/${cu.booking.id}/browser-jobs`, { token: t[key] });
    expect(list.status).toBe(404);
  });

  test('an id that is not a uuid, and a booking that does not exist, are 404', async () => {
    expect((await api.fetch('/api/v1/internal/fulfilment/browser-jobs/not-a-uuid', { token: t['bj-staff'] })).status).toBe(404);
    expect((await api.fetch(`/api/v1/internal/fulfilment/bookings/${randomUUID()}/browser-jobs`, { token: t['bj-staff'] })).status).toBe(
      404,
    );
  });
});
