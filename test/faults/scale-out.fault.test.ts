import { createTestEnv, remoteApi, type TestEnv } from '../support/api';
import { launchPlan, SEVEN_CHANNELS, waitForBooking, type PlanLineInput } from '../support/bookings';
import { freePort } from '../support/ports';
import { startScript, type Started } from '../support/processes';
import { mapLimit } from './support/fleet';
import { figure } from './support/input-report';
import { SANDBOX_TRIGGERS } from '../../workers/adapters/sandbox';

/**
 * The service scaled out on one PostgreSQL and one Redis: two API processes behind one port
 * (API_PROCESSES=2) and three worker processes, each taking supplier work (WORKER_QUEUES
 * roles). Under a load of launches, the work must spread over every process, and each line
 * must be booked at its supplier exactly once.
 */
const BOOKINGS = 40;
let env: TestEnv;
let web: Started;
let url: string;
const workers: Started[] = [];

beforeAll(async () => {
  env = await createTestEnv();
  const port = await freePort();
  web = startScript('bin/web.ts', env.processEnv({ API_PROCESSES: '2', PORT: String(port), HOST: '127.0.0.1', LOG_LEVEL: 'info' }));
  const shared = { LOG_LEVEL: 'info', OUTBOX_RELAY_INTERVAL_MS: '200', ADAPTER_CONCURRENCY: '2', SANDBOX_SLOW_MS: '200' };
  for (const roles of ['suppliers,housekeeping', 'suppliers', 'suppliers,creative-reviews,audiences,personas,pixel']) {
    workers.push(startScript('bin/worker.ts', env.processEnv({ ...shared, WORKER_QUEUES: roles })));
  }
  await web.waitFor(/api processes listening/, 120_000);
  await Promise.all(workers.map((w) => w.waitFor(/workers started/, 120_000)));
  url = `http://127.0.0.1:${port}`;
}, 180_000);

afterAll(async () => {
  const codes = await Promise.all([web, ...workers].map((p) => p?.stop('SIGTERM')));
  await env.close();
  expect(codes).toEqual(Array(codes.length).fill(0));
});

/** Seven lines, a third of them slow at the sandbox supplier, so that jobs overlap. */
const linesFor = (i: number): PlanLineInput[] =>
  SEVEN_CHANNELS.map((channel, c) => ({
    channel,
    adapterKey: `sandbox-${channel}`,
    budgetMinor: 10_000 + c * 100 + ((i + c) % 3 === 0 ? SANDBOX_TRIGGERS.slow : 0),
  }));

/** Each process's log lines that carry `msg`, as parsed JSON. */
function logged(p: Started, msg: string): Array<Record<string, unknown>> {
  return p
    .output()
    .split('\n')
    .filter((l) => l.startsWith('{') && l.includes(msg))
    .map((l) => JSON.parse(l) as Record<string, unknown>)
    .filter((e) => e.msg === msg);
}

test('work spreads over three worker processes and two API processes, and every line is booked once', async () => {
  const api = remoteApi(url);
  const launched = await mapLimit(
    Array.from({ length: BOOKINGS }, (_, i) => i),
    8,
    (i) => launchPlan(env, api, linesFor(i), `org-scale-${i % 5}`),
  );
  for (const l of launched)
    await waitForBooking(
      api,
      l.token,
      l.booking.id,
      (b) => b.lines.every((x) => x.status !== 'queued' && x.status !== 'in-progress'),
      120_000,
    );

  const bookingIds = launched.map((l) => l.booking.id);
  const lines = await env.db('booking_lines').whereIn('booking_id', bookingIds).select('id', 'status');
  const attempts = await env.db('supplier_attempts').whereIn('booking_id', bookingIds).where({ operation: 'book' }).select('line_id');
  const receipts = await env
    .db('sandbox_ledger')
    .whereIn(
      'line_id',
      lines.map((l) => l.id),
    )
    .where({ operation: 'book' })
    .select('line_id');
  const perLine = (rows: Array<{ line_id: string }>) => lines.map((l) => rows.filter((r) => r.line_id === l.id).length);
  expect(lines).toHaveLength(BOOKINGS * 7);
  expect(perLine(attempts)).toEqual(Array(lines.length).fill(1));
  expect(perLine(receipts)).toEqual(Array(lines.length).fill(1));

  // Which worker process handled each line: each handled some, none handled a line another did.
  const handled = workers.map((w) => new Set(logged(w, 'supplier operation handled').map((e) => String(e.lineId))));
  const counts = handled.map((s) => s.size);
  figure(`scale-out: ${lines.length} lines handled by worker processes ${counts.join(' / ')}`);
  for (const n of counts) expect(n).toBeGreaterThan(0);
  expect(counts.reduce((a, b) => a + b, 0)).toBe(lines.length);
  expect(new Set(handled.flatMap((s) => [...s])).size).toBe(lines.length);

  // Both API processes answered requests (the request log names its process).
  const answeredBy = new Map<number, number>();
  for (const line of web.output().split('\n')) {
    if (!line.startsWith('{') || !line.includes('"res"')) continue;
    const e = JSON.parse(line) as { pid?: number; res?: unknown };
    if (e.res && e.pid) answeredBy.set(e.pid, (answeredBy.get(e.pid) ?? 0) + 1);
  }
  figure(`scale-out: requests answered per API process ${[...answeredBy.values()].join(' / ')}`);
  expect(answeredBy.size).toBe(2);
  for (const n of answeredBy.values()) expect(n).toBeGreaterThan(0);
}, 300_000);
