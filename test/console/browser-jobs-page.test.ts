import { createTestEnv, type TestEnv } from '../support/api';
import { readBooking, type BookingBody } from '../support/bookings';
import { assignClient, grantStaff } from '../../shared/staff/staff-store';
import { html, startSupplierSite, type SupplierSite } from '../support/supplier-site';
import { until } from '../support/wait';
import { startConsoleService, type ConsoleBrowser, type ConsoleService } from './support';

/**
 * The staff booking page with browser jobs: asked for from the page, their evidence shown there
 * (the screenshot as a picture, a preparation's worksheet beside it), and cited when the line is
 * confirmed. The supplier site is served by the test on loopback, under the test-only allowance.
 */
let env: TestEnv;
let service: ConsoleService;
let site: SupplierSite;
let staff: ConsoleBrowser;
const ORG = 'org-cbj';

beforeAll(async () => {
  env = await createTestEnv();
  site = await startSupplierSite({
    '/rate-card': html('<!doctype html><title>Rate card</title><h1>Rate card</h1><p>CPM 9.75 GBP on 12 screens.</p>'),
    '/booking': html(
      '<!doctype html><title>Book</title><form method="post" action="/book"><label for="b">Total budget</label><input id="b" name="b"><label for="s">Start date</label><input id="s" name="s"></form>',
    ),
  });
  service = await startConsoleService(env, { BROWSER_ALLOW_LOOPBACK: 'true' });
  await env.workers({ WORKER_QUEUES: 'browser,supplier.computer-use', BROWSER_ALLOW_LOOPBACK: 'true', OUTBOX_RELAY_INTERVAL_MS: '100' });
  await grantStaff(env.staff, 'cbj-staff');
  await assignClient(env.staff, 'cbj-staff', ORG);
  staff = await service.signIn({ user: 'cbj-staff', workspace: 'staff-org' });
}, 60_000);
afterAll(async () => {
  await env.close();
  await site.close();
});

const launch = () =>
  service.launch(ORG, [{ channel: 'dooh', adapterKey: 'computer-use', budgetMinor: 30_000 }], (b) => b.lines[0]!.workflowSteps != null);
const pagePath = (b: BookingBody) => `/console/fulfilment/bookings/${b.id}`;
async function queueJob(b: BookingBody, purpose: 'observe' | 'prepare', path: string): Promise<string> {
  await staff.page(pagePath(b));
  const res = await staff.form(`${pagePath(b)}/browser-jobs`, {
    channelCampaignId: b.lines[0]!.channelCampaignId,
    purpose,
    supplierUrl: `${site.origin}${path}`,
    expectedSnapshotDigest: b.snapshotDigest,
    readOnlyConfirmed: 'true',
  });
  expect(res.status).toBe(303);
  const [job] = await env.db('browser_jobs').where({ booking_id: b.id, purpose }).orderBy('created_at', 'desc').limit(1);
  await until(
    'the job to end',
    async () => (await env.db('browser_jobs').where({ id: job.id }).first('status')).status === 'completed',
    60_000,
  );
  return job.id as string;
}
async function lineForm(b: BookingBody, op: string, fields: Record<string, string> = {}) {
  const buyer = await service.token({ org: ORG, user: `${ORG}-buyer` });
  const line = (await readBooking(service.api, buyer, b.id)).lines[0]!;
  await staff.page(pagePath(b));
  const res = await staff.form(`${pagePath(b)}/lines/${line.id}/${op}`, { expectedVersion: String(line.version), ...fields });
  expect(res.status).toBe(303);
}

test('a job asked for on the booking page shows its screenshot as a picture, with what it says; confirming the line cites it', async () => {
  const b = await launch();
  const jobId = await queueJob(b, 'observe', '/rate-card');
  const flash = await staff.page(pagePath(b));
  expect(flash.html).toContain('Queued browser job');
  const job = await env.db('browser_jobs').where({ id: jobId }).first('evidence');
  const e = job.evidence;

  const res = await staff.go(`${service.base}${pagePath(b)}`);
  expect(res.headers.get('content-security-policy')).toContain("img-src 'self'");
  const page = await res.text();
  const img = new RegExp(
    `<img src="/files/assets/${e.screenshot.sha256}\\.png" alt="Screenshot of ${site.origin.replace(/\./g, '\\.')}/rate-card, [^"]+"`,
  );
  expect(page).toMatch(img);
  expect(page).toContain(`<code data-final-url>${site.origin}/rate-card</code>`);
  expect(page).toContain(`<code data-evidence-digest>${e.digest}</code>`);
  expect(page).toContain(e.text.sha256);
  expect(page).toMatch(/data-browser-job-status>completed</);
  // The picture is served from the page's own origin, which the page's policy allows.
  const picture = await staff.go(`${service.base}${e.screenshot.url}`);
  expect([picture.status, picture.headers.get('content-type')]).toEqual([200, 'image/png']);

  // Work the line and confirm it, citing the job: the evidence trail names the screenshot and its digest.
  await lineForm(b, 'claim');
  await lineForm(b, 'start');
  const confirmPage = (await staff.page(pagePath(b))).html;
  expect(confirmPage).toContain(`name="browserJobIds" value="${jobId}"`);
  await lineForm(b, 'confirm', { providerReference: 'IO-31', evidence: 'Booked at the rate card shown.', browserJobIds: jobId });
  const after = (await staff.page(pagePath(b))).html;
  expect(after).toContain('Browser evidence cited');
  expect(after).toContain(`<a href="/files/assets/${e.screenshot.sha256}.png">Screenshot</a>`);
  const buyer = await service.token({ org: ORG, user: `${ORG}-buyer` });
  const confirmed = (await readBooking(service.api, buyer, b.id)).events.find((ev) => ev.action === 'line.confirmed')!;
  expect(confirmed.detail).toMatchObject({ browserEvidence: [{ browserJobId: jobId, evidenceDigest: e.digest }] });
}, 120_000);

test('a preparation shows what to enter where beside the page', async () => {
  const b = await launch();
  await lineForm(b, 'claim');
  await lineForm(b, 'start');
  await queueJob(b, 'prepare', '/booking');
  const page = (await staff.page(pagePath(b))).html;
  expect(page).toContain('What to enter where');
  expect(page).toMatch(/<th scope="row">Budget<\/th><td><code>300\.00 GBP<\/code><\/td><td>Total budget<\/td>/);
  expect(page).toMatch(/<th scope="row">Start date<\/th><td><code>2099-03-01<\/code><\/td><td>Start date<\/td>/);
  expect(site.received.filter((r) => r.path === '/book')).toEqual([]);
}, 120_000);
