import { createHash } from 'node:crypto';
import { Queue } from 'bullmq';
import { createTestEnv, json, type TestApi, type TestEnv } from '../support/api';
import { launchPlan, post, readBooking, waitForBooking, type Launched } from '../support/bookings';
import { assignClient, grantStaff } from '../../shared/staff/staff-store';
import { subscribe } from '../support/webhooks';
import { until } from '../support/wait';
import { html, redirect, startSupplierSite, type SupplierSite } from '../support/supplier-site';
import { digestOf } from '../../shared/digest';
import { BROWSER_JOBS_QUEUE, queuePrefix } from '../../shared/queues/names';
import type { BrowserJob } from '../../shared/bookings/browser-job-schemas';
import type { RunningWorkers } from '../../workers/main';

/**
 * The browser worker against a supplier site the test serves on loopback (under the test-only
 * loopback allowance). The site records every request it receives; a second server stands for any
 * other host the page tries to reach.
 */
let env: TestEnv;
let api: TestApi;
let site: SupplierSite;
let elsewhere: SupplierSite;
let staff: string;
let workers: RunningWorkers;
const ORG = 'org-bw';
const LIMITS = { BROWSER_JOB_TIMEOUT_MS: '15000', BROWSER_JOB_MAX_BYTES: '400000', BROWSER_JOB_MAX_REQUESTS: '25' };

const RATE_CARD = () => `<!doctype html><html lang="en"><head><title>Sandbox DOOH rate card</title></head><body>
<h1>Rate card: London screens</h1><p>CPM 12.50 GBP across 42 screens.</p>
<p style="display:none">Words the page hides from people.</p>
<form id="order" method="post" action="/order"><label for="b">Budget</label><input id="b" name="budget"><button>Book now</button></form>
<a id="dl" href="/report.csv" download>Download the report</a>
<img alt="" src="http://localhost:${elsewhere.port}/pixel.gif">
<script>
// Each navigation in turn: a later one would cancel an earlier one before its request left.
location.href = '/elsewhere';
(async () => {
  await fetch('/api/track', { method: 'POST', body: 'spend=1' }).catch(() => {});
  navigator.sendBeacon('/beacon', 'seen');
  await fetch('/to-private').catch(() => {});
  window.open('/popup');
  document.getElementById('dl').click();
  document.getElementById('b').value = 'typed by the page';
  setTimeout(() => document.getElementById('order').submit(), 300);
})();
</script></body></html>`;

const BOOKING_FORM = `<!doctype html><html lang="en"><head><title>Book screens</title></head><body>
<h1>New booking</h1><form method="post" action="/book">
<label for="n">Campaign name</label><input id="n" name="name">
<label for="s">Start date</label><input id="s" type="date" name="start">
<label for="e">End date</label><input id="e" type="date" name="end">
<label for="b">Total budget</label><input id="b" name="budget">
<label for="r">PO reference</label><input id="r" name="po">
<input type="hidden" name="csrf" value="x"><button>Submit booking</button></form>
<script>setTimeout(() => document.querySelector('form').submit(), 10);</script></body></html>`;

beforeAll(async () => {
  env = await createTestEnv();
  elsewhere = await startSupplierSite({ '/pixel.gif': html('') });
  site = await startSupplierSite({
    '/rate-card': html(RATE_CARD()),
    '/to-private': redirect('http://10.1.2.3/internal'),
    '/moved': redirect('http://169.254.169.254/latest/meta-data/'),
    '/report.csv': (_req, res) => void res.writeHead(200, { 'content-type': 'text/csv', 'content-disposition': 'attachment' }).end('a,b\n'),
    '/booking': html(BOOKING_FORM),
    '/big': html(`<!doctype html><title>Big</title><p>${'x'.repeat(600_000)}</p>`),
    '/many': html(`<!doctype html><title>Many</title>${Array.from({ length: 40 }, (_, i) => `<img alt="" src="/img/${i}.gif">`).join('')}`),
    '/never': (_req, res) =>
      void res.writeHead(200, { 'content-type': 'text/html' }).write('<!doctype html><title>Slow</title><p>still loading'),
    '/simple': html('<!doctype html><title>Simple</title><p>Screens available in March.</p>'),
  });
  api = await env.api({ BROWSER_ALLOW_LOOPBACK: 'true' });
  await grantStaff(env.staff, 'bw-staff');
  await assignClient(env.staff, 'bw-staff', ORG);
  staff = await env.issuer.token({ org: 'staff-org', user: 'bw-staff' });
  workers = await env.workers({
    WORKER_QUEUES: 'browser,supplier.computer-use',
    BROWSER_ALLOW_LOOPBACK: 'true',
    OUTBOX_RELAY_INTERVAL_MS: '100',
    ...LIMITS,
  });
}, 60_000);
afterAll(async () => {
  await env.close();
  await site.close();
  await elsewhere.close();
});

/** A computer-use line, once its workflow supplier has handed it to staff (so nothing else moves it). */
async function launchComputerUse(): Promise<Launched> {
  const l = await launchPlan(env, api, [{ channel: 'dooh', adapterKey: 'computer-use', budgetMinor: 20_000 }], ORG);
  const booking = await waitForBooking(api, l.token, l.booking.id, (b) => b.lines[0]!.workflowSteps != null);
  return { ...l, booking };
}
const jobsPath = (l: Launched) => `/api/v1/internal/fulfilment/clients/${ORG}/campaigns/${l.campaignId}/browser-jobs`;
async function ask(l: Launched, path: string, purpose: 'observe' | 'prepare' = 'observe'): Promise<BrowserJob> {
  const res = await post(api, staff, jobsPath(l), {
    channelCampaignId: l.booking.lines[0]!.channelCampaignId,
    purpose,
    supplierUrl: `${site.origin}${path}`,
    expectedSnapshotDigest: l.booking.snapshotDigest,
    readOnlyConfirmed: true,
  });
  expect(res.status).toBe(202);
  return (await json<{ browserJob: BrowserJob }>(res)).browserJob;
}
const read = async (id: string) =>
  (await json<{ browserJob: BrowserJob }>(await api.fetch(`/api/v1/internal/fulfilment/browser-jobs/${id}`, { token: staff }))).browserJob;
async function ended(id: string, timeoutMs = 60_000): Promise<BrowserJob> {
  let job: BrowserJob | undefined;
  await until(`browser job ${id} to end`, async () => ['completed', 'failed'].includes((job = await read(id)).status), timeoutMs);
  return job!;
}
const since = (t: number) => site.received.filter((r) => r.at >= t);
const lineOp = async (l: Launched, name: string, body: Record<string, unknown> = {}) => {
  const line = (await readBooking(api, l.token, l.booking.id)).lines[0]!;
  const path = `/api/v1/internal/fulfilment/bookings/${l.booking.id}/lines/${line.id}/${name}`;
  return post(api, staff, path, { expectedVersion: line.version, ...body });
};
const sha256 = (b: Buffer) => createHash('sha256').update(b).digest('hex');

describe('observing an official source', () => {
  test('only GETs reach the site: the page’s POST, beacon, form, popup, navigation and download are refused, and so are a private redirect and another host', async () => {
    await subscribe(env, api, ORG, ['browser_job.completed', 'browser_job.failed']);
    const l = await launchComputerUse();
    const bookingBefore = await env.db('bookings').where({ id: l.booking.id }).first('version', 'status');
    const eventsBefore = await env.db('booking_events').where({ booking_id: l.booking.id }).count({ n: '*' });
    const t0 = Date.now();
    const asked = await ask(l, '/rate-card');
    expect(asked).toMatchObject({ status: 'queued', evidence: null, failure: null, snapshotDigest: l.booking.snapshotDigest });
    const job = await ended(asked.id);
    expect(job.failure).toBeNull();
    expect(job.status).toBe('completed');

    const arrived = since(t0);
    expect(arrived.every((r) => r.method === 'GET')).toBe(true);
    const paths = arrived.map((r) => r.path);
    expect(paths.filter((p) => p === '/rate-card')).toHaveLength(1);
    for (const never of ['/order', '/api/track', '/beacon', '/popup', '/elsewhere']) expect(paths).not.toContain(never);
    expect(elsewhere.received).toEqual([]);

    const e = job.evidence!;
    expect(e).toMatchObject({
      bookingId: l.booking.id,
      lineId: l.booking.lines[0]!.id,
      snapshotDigest: l.booking.snapshotDigest,
      lineTermsDigest: job.lineTermsDigest,
      purpose: 'observe',
      requestedUrl: `${site.origin}/rate-card`,
      finalUrl: `${site.origin}/rate-card`,
      httpStatus: 200,
      title: 'Sandbox DOOH rate card',
      worksheet: null,
    });
    const reasons = e.requests.refused.map((r) => `${r.method} ${r.url.replace(site.origin, '')}: ${r.reason}`);
    expect(reasons).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^POST \/api\/track: only GET and HEAD/),
        expect.stringMatching(/^POST \/beacon: only GET and HEAD/),
        expect.stringMatching(/^POST \/order: only GET and HEAD/),
        expect.stringMatching(/^GET http:\/\/10\.1\.2\.3\/internal: .*private/),
        expect.stringMatching(
          new RegExp(`^GET http://localhost:${elsewhere.port}/pixel.gif: not one of the supplier's official source hosts`),
        ),
        expect.stringMatching(/^GET \/report.csv: downloads are refused/),
        expect.stringMatching(/^GET \/elsewhere: the page may not navigate away/),
        expect.stringMatching(/^GET \/popup: a browser job opens no other window/),
      ]),
    );
    // The digest covers everything else the evidence says.
    const { digest, ...rest } = e;
    expect(digest).toBe(digestOf(rest));

    // The artifacts are stored content-addressed: their bytes hash to what the evidence says.
    const shot = await api.fetch(e.screenshot.url);
    const png = Buffer.from(await shot.arrayBuffer());
    expect(shot.headers.get('content-type')).toBe('image/png');
    expect(png.subarray(0, 8).toString('hex')).toBe('89504e470d0a1a0a');
    expect(sha256(png)).toBe(e.screenshot.sha256);
    expect(png.length).toBe(e.screenshot.bytes);
    const textRes = await api.fetch(e.text.url);
    const text = Buffer.from(await textRes.arrayBuffer());
    expect(sha256(text)).toBe(e.text.sha256);
    expect(text.toString('utf8')).toContain('CPM 12.50 GBP across 42 screens.');
    expect(text.toString('utf8')).not.toContain('Words the page hides');
    expect(e.screenshot.url).toBe(`/files/assets/${e.screenshot.sha256}.png`);

    // Timings, and nothing of the booking moved.
    expect(Date.parse(job.createdAt)).toBeLessThanOrEqual(Date.parse(job.startedAt!));
    expect(Date.parse(job.startedAt!)).toBeLessThanOrEqual(Date.parse(job.finishedAt!));
    expect(await env.db('bookings').where({ id: l.booking.id }).first('version', 'status')).toEqual(bookingBefore);
    expect(await env.db('booking_events').where({ booking_id: l.booking.id }).count({ n: '*' })).toEqual(eventsBefore);

    const [event, ...more] = await env.db('webhook_events').where({ type: 'browser_job.completed', subject_id: job.id });
    expect(more).toEqual([]);
    expect(event.body).toEqual({
      browserJobId: job.id,
      bookingId: l.booking.id,
      lineId: l.booking.lines[0]!.id,
      purpose: 'observe',
      status: 'completed',
      failureCode: null,
      evidenceDigest: e.digest,
    });
  }, 90_000);

  test('a page that redirects to a link-local (metadata) address ends failed with the reason, and the redirect is never followed', async () => {
    const l = await launchComputerUse();
    const job = await ended((await ask(l, '/moved')).id);
    expect(job).toMatchObject({ status: 'failed', evidence: null, failure: { code: 'address_refused' } });
    expect(job.failure!.reason).toMatch(/169\.254\.169\.254.*linkLocal/);
    const [event] = await env.db('webhook_events').where({ type: 'browser_job.failed', subject_id: job.id });
    expect(event.body).toMatchObject({ status: 'failed', failureCode: 'address_refused', evidenceDigest: null });
  }, 60_000);
});

describe('limits', () => {
  test.each([
    ['a page over the byte limit', '/big', 'page_too_large'],
    ['a page making more requests than allowed', '/many', 'too_many_requests'],
    ['a page that never finishes', '/never', 'timed_out'],
  ])(
    '%s ends failed (%s), never retried',
    async (_what, path, code) => {
      const l = await launchComputerUse();
      const t0 = Date.now();
      const job = await ended((await ask(l, path)).id);
      expect(job).toMatchObject({ status: 'failed', evidence: null, failure: { code } });
      // Once only: the page was asked for once, and the job is not queued again.
      expect(since(t0).filter((r) => r.path === path)).toHaveLength(1);
      const queue = new Queue(BROWSER_JOBS_QUEUE, { connection: env.redis, prefix: queuePrefix(env.prefix, BROWSER_JOBS_QUEUE) });
      expect((await queue.getJob(`browser-job-${job.id}`))?.attemptsMade ?? 0).toBeLessThanOrEqual(1);
      expect(await env.db('browser_jobs').where({ id: job.id }).first('status', 'version')).toEqual({ status: 'failed', version: 3 });
      const requests = since(t0).filter((r) => r.path.startsWith('/img/')).length;
      if (code === 'too_many_requests') expect(requests).toBeLessThanOrEqual(Number(LIMITS.BROWSER_JOB_MAX_REQUESTS));
    },
    60_000,
  );
});

describe('prepare', () => {
  test('lays the approved details beside the page’s fields; the page’s own submit is refused and nothing is sent', async () => {
    const l = await launchComputerUse();
    expect((await lineOp(l, 'claim')).status).toBe(200);
    expect((await lineOp(l, 'start')).status).toBe(200);
    const t0 = Date.now();
    const job = await ended((await ask(l, '/booking', 'prepare')).id);
    expect(job.failure).toBeNull();
    expect(since(t0).map((r) => `${r.method} ${r.path}`)).toEqual(['GET /booking']);
    const line = (await readBooking(api, l.token, l.booking.id)).lines[0]!;
    const rows = Object.fromEntries(job.evidence!.worksheet!.rows.map((r) => [r.detail, r]));
    expect(rows['Campaign name']).toEqual({ detail: 'Campaign name', value: 'Spring launch', field: 'Campaign name' });
    expect(rows['Start date']).toEqual({ detail: 'Start date', value: '2099-03-01', field: 'Start date' });
    expect(rows['End date']).toEqual({ detail: 'End date', value: '2099-03-31', field: 'End date' });
    expect(rows.Budget).toEqual({ detail: 'Budget', value: '200.00 GBP', field: 'Total budget' });
    expect(rows['Our reference']).toEqual({ detail: 'Our reference', value: line.channelCampaignId, field: 'PO reference' });
    expect(rows['Booking attempt']).toMatchObject({ value: line.providerAttemptId });
    expect(job.evidence!.worksheet!.sha256).toBe(digestOf(job.evidence!.worksheet!.rows));
    expect(job.evidence!.requests.refused.map((r) => `${r.method} ${r.url.replace(site.origin, '')}`)).toContain('POST /book');
    // The line is as the operator left it: started, the same attempt in flight.
    expect(line).toMatchObject({ status: 'in-progress', version: l.booking.lines[0]!.version + 2 });
  }, 60_000);
});

describe('refused when it starts', () => {
  const queue = () => new Queue(BROWSER_JOBS_QUEUE, { connection: env.redis, prefix: queuePrefix(env.prefix, BROWSER_JOBS_QUEUE) });

  test("a job whose line's terms changed after it was asked for (an amended budget) is refused, and the site sees nothing", async () => {
    const l = await launchComputerUse();
    expect((await lineOp(l, 'claim')).status).toBe(200);
    expect((await lineOp(l, 'start')).status).toBe(200);
    expect((await lineOp(l, 'confirm', { providerReference: 'IO-9', evidence: 'Confirmed by the supplier desk.' })).status).toBe(200);
    const q = queue();
    await q.pause();
    const t0 = Date.now();
    let id: string;
    try {
      id = (await ask(l, '/simple')).id;
      const booking = await readBooking(api, l.token, l.booking.id);
      const amended = await api.fetch(`/api/v1/campaigns/${l.campaignId}/amendments`, {
        method: 'POST',
        token: l.token,
        headers: { 'content-type': 'application/json', 'idempotency-key': crypto.randomUUID() },
        body: JSON.stringify({ expectedVersion: booking.version, lines: [{ lineId: booking.lines[0]!.id, budgetMinor: 15_000 }] }),
      });
      expect(amended.status).toBe(202);
      // The workflow supplier hands the change to staff, who carry it out.
      await until('the change to reach staff', async () => {
        // The operation is asked for at once; the worker's hand-off to staff (its steps) follows.
        const line = (await readBooking(api, l.token, l.booking.id)).lines[0]!;
        return line.pendingOperation != null && (line.workflowSteps ?? []).some((s) => /change the line/.test(s.detail));
      });
      expect((await lineOp(l, 'start')).status).toBe(200);
      expect((await lineOp(l, 'confirm', { evidence: 'The desk raised the budget.' })).status).toBe(200);
      expect((await readBooking(api, l.token, l.booking.id)).lines[0]!.budgetMinor).toBe(15_000);
    } finally {
      await q.resume();
    }
    const job = await ended(id);
    expect(job).toMatchObject({ status: 'failed', failure: { code: 'snapshot_changed' }, startedAt: null, evidence: null });
    expect(since(t0).filter((r) => r.path === '/simple')).toEqual([]);
  }, 90_000);

  test('a prepare whose attempt is no longer in flight (the line was confirmed meanwhile) is refused, and the site sees nothing', async () => {
    const l = await launchComputerUse();
    expect((await lineOp(l, 'claim')).status).toBe(200);
    expect((await lineOp(l, 'start')).status).toBe(200);
    const q = queue();
    await q.pause();
    const t0 = Date.now();
    let id: string;
    try {
      id = (await ask(l, '/booking', 'prepare')).id;
      expect((await lineOp(l, 'confirm', { providerReference: 'IO-10', evidence: 'Booked by phone instead.' })).status).toBe(200);
    } finally {
      await q.resume();
    }
    const job = await ended(id);
    expect(job).toMatchObject({ status: 'failed', failure: { code: 'attempt_not_in_flight' }, evidence: null });
    expect(since(t0)).toEqual([]);
  }, 60_000);
});

describe('citing the evidence', () => {
  test('confirming a line cites a completed job of that line: its evidence digest goes with the event; anything else is 409 and changes nothing', async () => {
    const l = await launchComputerUse();
    const other = await launchComputerUse();
    const good = await ended((await ask(l, '/simple')).id);
    const failed = await ended((await ask(l, '/moved')).id);
    const foreign = await ended((await ask(other, '/simple')).id);
    expect([good.status, failed.status, foreign.status]).toEqual(['completed', 'failed', 'completed']);
    expect((await lineOp(l, 'claim')).status).toBe(200);
    expect((await lineOp(l, 'start')).status).toBe(200);
    const before = await env.db('booking_lines').where({ id: l.booking.lines[0]!.id }).first('version', 'status');
    for (const ids of [[failed.id], [foreign.id], [good.id, crypto.randomUUID()]]) {
      const res = await lineOp(l, 'confirm', { providerReference: 'IO-11', evidence: 'Booked as the page showed.', browserJobIds: ids });
      expect(res.status).toBe(409);
      expect(await json(res)).toMatchObject({ code: 'evidence_not_citable' });
    }
    expect(await env.db('booking_lines').where({ id: l.booking.lines[0]!.id }).first('version', 'status')).toEqual(before);
    const res = await lineOp(l, 'confirm', {
      providerReference: 'IO-11',
      evidence: 'Booked as the page showed.',
      browserJobIds: [good.id],
    });
    expect(res.status).toBe(200);
    const booking = await readBooking(api, l.token, l.booking.id);
    const confirmed = booking.events.find((e) => e.action === 'line.confirmed')!;
    expect(confirmed.detail).toMatchObject({
      browserEvidence: [
        {
          browserJobId: good.id,
          evidenceDigest: good.evidence!.digest,
          snapshotDigest: l.booking.snapshotDigest,
          screenshotSha256: good.evidence!.screenshot.sha256,
        },
      ],
    });
  }, 90_000);
});

describe('citing the evidence on a refusal and a resolution', () => {
  test('a rejection and a resolution cite a completed job of the line: its digest goes with the event; a failed job is 409 and changes nothing', async () => {
    const rejected = await launchComputerUse();
    const good = await ended((await ask(rejected, '/simple')).id);
    const failed = await ended((await ask(rejected, '/moved')).id);
    expect([good.status, failed.status]).toEqual(['completed', 'failed']);
    expect((await lineOp(rejected, 'claim')).status).toBe(200);
    expect((await lineOp(rejected, 'start')).status).toBe(200);
    const before = await env.db('booking_lines').where({ id: rejected.booking.lines[0]!.id }).first('version', 'status');
    const refused = await lineOp(rejected, 'reject', { evidence: 'The page shows the slot sold out.', browserJobIds: [failed.id] });
    expect([refused.status, ((await json(refused)) as { code: string }).code]).toEqual([409, 'evidence_not_citable']);
    expect(await env.db('booking_lines').where({ id: rejected.booking.lines[0]!.id }).first('version', 'status')).toEqual(before);
    expect((await lineOp(rejected, 'reject', { evidence: 'The page shows the slot sold out.', browserJobIds: [good.id] })).status).toBe(
      200,
    );
    const afterReject = await readBooking(api, rejected.token, rejected.booking.id);
    expect(afterReject.events.find((e) => e.action === 'line.rejected')!.detail).toMatchObject({
      browserEvidence: [{ browserJobId: good.id, evidenceDigest: good.evidence!.digest }],
    });

    // A line in doubt, resolved on what the page showed.
    const doubtful = await launchComputerUse();
    const seen = await ended((await ask(doubtful, '/simple')).id);
    expect((await lineOp(doubtful, 'claim')).status).toBe(200);
    expect((await lineOp(doubtful, 'start')).status).toBe(200);
    expect((await lineOp(doubtful, 'uncertain', { evidence: 'The desk did not answer.' })).status).toBe(200);
    const resolved = await lineOp(doubtful, 'resolve', {
      outcome: 'applied',
      providerReference: 'IO-12',
      evidence: 'The supplier page lists our booking.',
      browserJobIds: [seen.id],
    });
    expect(resolved.status).toBe(200);
    const afterResolve = await readBooking(api, doubtful.token, doubtful.booking.id);
    expect(afterResolve.lines[0]!.status).toBe('confirmed');
    expect(afterResolve.events.find((e) => e.action === 'line.resolved')!.detail).toMatchObject({
      browserEvidence: [{ browserJobId: seen.id, evidenceDigest: seen.evidence!.digest }],
    });
  }, 90_000);
});

describe('where no browser can run', () => {
  test('without the loopback allowance, the worker refuses a loopback address: the job fails and the site sees nothing', async () => {
    await workers.close();
    const strict = await env.workers({
      WORKER_QUEUES: 'browser,supplier.computer-use',
      BROWSER_ALLOW_LOOPBACK: 'false',
      OUTBOX_RELAY_INTERVAL_MS: '100',
      ...LIMITS,
    });
    try {
      const l = await launchComputerUse();
      const t0 = Date.now();
      const job = await ended((await ask(l, '/simple')).id);
      expect(job).toMatchObject({ status: 'failed', failure: { code: 'address_refused' } });
      expect(job.failure!.reason).toMatch(/the address is loopback/);
      expect(since(t0)).toEqual([]);
    } finally {
      await strict.close();
    }
  }, 60_000);

  test('a browser that cannot start fails the job with a clear reason', async () => {
    const broken = await env.workers({
      WORKER_QUEUES: 'browser,supplier.computer-use',
      CHROMIUM_PATH: '/bin/false',
      BROWSER_ALLOW_LOOPBACK: 'true',
      OUTBOX_RELAY_INTERVAL_MS: '100',
    });
    try {
      const l = await launchComputerUse();
      const job = await ended((await ask(l, '/simple')).id);
      expect(job).toMatchObject({ status: 'failed', failure: { code: 'browser_unavailable' } });
      expect(job.failure!.reason).toMatch(/could not be started/);
    } finally {
      await broken.close();
    }
  }, 60_000);

  test('a worker with no Chromium takes no browser job, readiness says why, and a job left waiting ends browser_unavailable with the reason', async () => {
    const none = await env.workers({
      WORKER_QUEUES: 'browser,supplier.computer-use,maintenance',
      CHROMIUM_PATH: '/nonexistent/chromium',
      OUTBOX_RELAY_INTERVAL_MS: '100',
      BROWSER_JOB_QUEUE_WAIT_MS: '4000',
    });
    try {
      await subscribe(env, api, ORG, ['browser_job.failed']);
      const l = await launchComputerUse();
      const t0 = Date.now();
      const asked = await ask(l, '/simple');
      await until('readiness to report the browser', async () => {
        const res = await api.fetch('/readyz');
        const body = await json<{ checks: Record<string, { ok: boolean; detail: string }> }>(res);
        return res.status === 503 && /no worker has a browser/.test(body.checks.browser?.detail ?? '');
      });
      // Waiting, not run, until the wait is over.
      expect((await read(asked.id)).status).toBe('queued');
      const job = await ended(asked.id, 60_000);
      expect(job).toMatchObject({ status: 'failed', failure: { code: 'browser_unavailable' }, startedAt: null, evidence: null });
      expect(job.failure!.reason).toMatch(
        /No worker could run this job within 4 s: Chromium was not found at CHROMIUM_PATH \(\/nonexistent\/chromium\)/,
      );
      expect(Date.parse(job.finishedAt!) - Date.parse(job.createdAt)).toBeGreaterThanOrEqual(4000);
      expect(since(t0)).toEqual([]);
      const events = await env.db('webhook_events').where({ type: 'browser_job.failed', subject_id: asked.id });
      expect(events.map((e) => e.body.failureCode)).toEqual(['browser_unavailable']);
    } finally {
      await none.close();
    }
  }, 90_000);
});
