import fs from 'node:fs';
import { createTestEnv, json, type TestApi, type TestEnv } from '../support/api';
import { launchPlan, post, type Launched } from '../support/bookings';
import { assignClient, grantStaff } from '../../shared/staff/staff-store';
import { startScript, type Started } from '../support/processes';
import { html, startSupplierSite, type SupplierSite } from '../support/supplier-site';
import { until } from '../support/wait';
import type { BrowserJob } from '../../shared/bookings/browser-job-schemas';

/**
 * Browser jobs on two worker processes, each the `browser` role alone, as a deployment scales
 * them: the jobs spread over both, each is run by one of them once, and a job whose process is
 * killed mid-run is ended `interrupted` by the other, never run again.
 */
let env: TestEnv;
let api: TestApi;
let site: SupplierSite;
let staff: string;
let line: Launched;
const workers: Started[] = [];
const ORG = 'org-bjp';

beforeAll(async () => {
  env = await createTestEnv();
  // Each page takes a moment to answer, so that one process cannot take every job before the other.
  const slow = html('<!doctype html><title>Screens</title><p>Screens available in March.</p>');
  site = await startSupplierSite({
    '/screens': (req, res, s) => void setTimeout(() => slow(req, res, s), 700),
    '/hang': (_req, res) => void res.writeHead(200, { 'content-type': 'text/html' }).write('<!doctype html><title>Hang</title><p>loading'),
  });
  api = await env.api({ BROWSER_ALLOW_LOOPBACK: 'true' });
  await grantStaff(env.staff, 'bjp-staff');
  await assignClient(env.staff, 'bjp-staff', ORG);
  staff = await env.issuer.token({ org: 'staff-org', user: 'bjp-staff' });
  line = await launchPlan(env, api, [{ channel: 'dooh', adapterKey: 'computer-use', budgetMinor: 20_000 }], ORG);
  const processEnv = env.processEnv({
    WORKER_QUEUES: 'browser',
    BROWSER_ALLOW_LOOPBACK: 'true',
    BROWSER_JOB_TIMEOUT_MS: '90000',
    OUTBOX_RELAY_INTERVAL_MS: '200',
    // A killed process's job is noticed within seconds, and a live one keeps its lock on a busy machine.
    WORKER_LOCK_DURATION_MS: '5000',
    WORKER_STALLED_INTERVAL_MS: '1000',
    LOG_LEVEL: 'info',
  });
  for (let i = 0; i < 2; i++) workers.push(startScript('bin/worker.ts', processEnv));
  await Promise.all(workers.map((w) => w.waitFor(/workers started/)));
}, 120_000);
afterAll(async () => {
  await Promise.all(workers.map((w) => w.stop()));
  await env.close();
  await site.close();
});

async function ask(path: string): Promise<BrowserJob> {
  const res = await post(api, staff, `/api/v1/internal/fulfilment/clients/${ORG}/campaigns/${line.campaignId}/browser-jobs`, {
    channelCampaignId: line.booking.lines[0]!.channelCampaignId,
    purpose: 'observe',
    supplierUrl: `${site.origin}${path}`,
    expectedSnapshotDigest: line.booking.snapshotDigest,
    readOnlyConfirmed: true,
  });
  expect(res.status).toBe(202);
  return (await json<{ browserJob: BrowserJob }>(res)).browserJob;
}
const rows = (ids: string[]) => env.db('browser_jobs').whereIn('id', ids).select('id', 'status', 'version', 'run_by', 'failure_code');

test('jobs spread over two worker processes, and each runs once', async () => {
  const jobs: BrowserJob[] = [];
  for (let i = 0; i < 6; i++) jobs.push(await ask(`/screens?n=${i}`));
  const ids = jobs.map((j) => j.id);
  await until('every job to end', async () => (await rows(ids)).every((r) => r.status === 'completed' || r.status === 'failed'), 180_000);
  const ended = await rows(ids);
  expect(ended.map((r) => [r.status, r.failure_code, r.version])).toEqual(ids.map(() => ['completed', null, 3]));
  // Both processes ran some.
  const pids = workers.map((w) => w.child.pid);
  const runners = new Set(ended.map((r) => Number(String(r.run_by).split(':').pop())));
  expect([...runners].sort()).toEqual([...pids].sort());
  // Each page was opened exactly once.
  for (let i = 0; i < 6; i++) expect(site.received.filter((r) => r.path === `/screens?n=${i}`)).toHaveLength(1);
  expect(site.received.every((r) => r.method === 'GET')).toBe(true);
}, 240_000);

/** The browser a worker process started: its child whose command line is Chromium's. */
function browserOf(workerPid: number): number[] {
  return fs
    .readdirSync('/proc')
    .filter((d) => /^\d+$/.test(d))
    .filter((d) => {
      try {
        const stat = fs.readFileSync(`/proc/${d}/stat`, 'utf8');
        const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
        return ppid === workerPid && /chrom/i.test(fs.readFileSync(`/proc/${d}/cmdline`, 'utf8'));
      } catch {
        return false; // gone meanwhile
      }
    })
    .map(Number);
}

test('a browser that dies under a job ends it browser_crashed; the process lives on, runs the next job, and never runs the first again', async () => {
  const job = await ask('/hang?crash');
  await until('the page to be asked for', async () => site.received.some((r) => r.path === '/hang?crash'), 60_000);
  const [running] = await rows([job.id]);
  expect(running!.status).toBe('running');
  const pid = Number(String(running!.run_by).split(':').pop());
  const browsers = browserOf(pid);
  expect(browsers).toHaveLength(1);
  process.kill(browsers[0]!, 'SIGKILL');
  await until('the job to end', async () => (await rows([job.id]))[0]!.status === 'failed', 60_000);
  const [after] = await rows([job.id]);
  expect(after).toMatchObject({ status: 'failed', failure_code: 'browser_crashed', run_by: running!.run_by });
  // The worker process is still there and takes the next job; the crashed one is not run again.
  const runner = workers.find((w) => w.child.pid === pid)!;
  expect(runner.child.exitCode).toBeNull();
  const next = await ask('/screens?after-crash');
  await until('the next job to complete', async () => (await rows([next.id]))[0]!.status === 'completed', 120_000);
  expect(site.received.filter((r) => r.path === '/hang?crash')).toHaveLength(1);
  const view = await api.fetch(job.href, { token: staff });
  expect(await json(view)).toMatchObject({ browserJob: { status: 'failed', failure: { code: 'browser_crashed' } } });
}, 240_000);

test('a job whose process is killed mid-run is ended interrupted by the other process, not run again', async () => {
  const job = await ask('/hang');
  await until('the job to be running', async () => (await rows([job.id]))[0]!.status === 'running', 60_000);
  await until('the page to be asked for', async () => site.received.some((r) => r.path === '/hang'), 60_000);
  const [running] = await rows([job.id]);
  const pid = Number(String(running!.run_by).split(':').pop());
  const victim = workers.find((w) => w.child.pid === pid)!;
  victim.child.kill('SIGKILL');
  await victim.stop();
  await until('the job to end', async () => (await rows([job.id]))[0]!.status === 'failed', 90_000);
  const [after] = await rows([job.id]);
  expect(after).toMatchObject({ status: 'failed', failure_code: 'interrupted', run_by: running!.run_by });
  expect(site.received.filter((r) => r.path === '/hang')).toHaveLength(1);
}, 180_000);
