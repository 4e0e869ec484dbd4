import fs from 'node:fs';
import path from 'node:path';
import { spawn, type ChildProcess } from 'node:child_process';
import { Redis } from 'ioredis';
import { TEST_AUDIENCE, TEST_ISSUER, type TestIssuer } from '../../support/issuer';
import { cleanEnv, startScript, type Started } from '../../support/processes';
import type { ApiClient } from '../../support/api';
import { until } from '../../support/wait';
import { freePort } from '../../support/ports';

/** A server the test owns outright, so it can take it away and bring it back. */
export interface Dedicated {
  url: string;
  start(): Promise<void>;
  stop(): Promise<void>;
}

/** A PostgreSQL cluster of its own (the product's embedded one) on a free port; data survives a stop. */
export async function dedicatedPostgres(dataDir: string): Promise<Dedicated> {
  const port = await freePort();
  let running: Started | null = null;
  let url = '';
  const server: Dedicated = {
    get url() {
      return url;
    },
    async start() {
      if (running) return;
      running = startScript('test/faults/support/postgres-server.ts', { PATH: process.env.PATH, HOME: process.env.HOME }, [
        dataDir,
        String(port),
      ]);
      url = (await running.waitFor(/ready (\S+)/, 120_000))[1]!;
    },
    /** A fast shutdown: PostgreSQL ends every session and stops taking connections. */
    async stop() {
      await running?.stop('SIGTERM');
      running = null;
    },
  };
  await server.start();
  return server;
}

/**
 * A redis-server of its own on a free port. It writes an append-only file with every write
 * synced, as a production Redis under BullMQ should, so a SIGKILL loses nothing acknowledged.
 */
export async function dedicatedRedis(dataDir: string): Promise<Dedicated> {
  const port = await freePort();
  const dir = path.join(dataDir, 'redis');
  fs.mkdirSync(dir, { recursive: true });
  const url = `redis://127.0.0.1:${port}`;
  let child: ChildProcess | null = null;
  const ping = async () => {
    const client = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
    try {
      await client.connect();
      return (await client.ping()) === 'PONG';
    } catch {
      return false;
    } finally {
      client.disconnect();
    }
  };
  const server: Dedicated = {
    url,
    async start() {
      if (child) return;
      child = spawn(
        'redis-server',
        ['--port', String(port), '--bind', '127.0.0.1', '--dir', dir, '--save', '', '--appendonly', 'yes', '--appendfsync', 'always'],
        { stdio: 'ignore' },
      );
      await until('the dedicated Redis to answer', ping, 15_000);
    },
    /** A crash, not a shutdown: the process is SIGKILLed. */
    async stop() {
      const c = child;
      child = null;
      if (!c || c.exitCode !== null) return;
      const exited = new Promise((r) => c.once('exit', r));
      c.kill('SIGKILL');
      await exited;
    },
  };
  await server.start();
  return server;
}

export interface Answer {
  at: number;
  operation: string;
  status: number | 'connection lost';
  retryAfter: string | null;
  problem: boolean;
  recovery: unknown;
  code: unknown;
}

/** Keeps `concurrency` callers busy with the given requests until stopped, recording every answer. */
export function steadyLoad(
  baseUrl: string,
  token: string,
  requests: Array<{ operation: string; make: () => { path: string; init?: RequestInit } }>,
  concurrency: number,
) {
  const answers: Answer[] = [];
  let stopped = false;
  const callers = Array.from({ length: concurrency }, async (_, c) => {
    for (let i = c; !stopped; i++) {
      const req = requests[i % requests.length]!;
      const { path: p, init = {} } = req.make();
      const headers = new Headers(init.headers);
      headers.set('authorization', `Bearer ${token}`);
      const answer: Answer = {
        at: Date.now(),
        operation: req.operation,
        status: 'connection lost',
        retryAfter: null,
        problem: false,
        recovery: null,
        code: null,
      };
      try {
        const res = await fetch(`${baseUrl}${p}`, { ...init, headers, signal: AbortSignal.timeout(20_000) });
        answer.status = res.status;
        answer.retryAfter = res.headers.get('retry-after');
        answer.problem = (res.headers.get('content-type') ?? '').startsWith('application/problem+json');
        const body = (await res.json().catch(() => null)) as { recovery?: unknown; code?: unknown } | null;
        answer.recovery = body?.recovery ?? null;
        answer.code = body?.code ?? null;
      } catch {
        // Recorded as a lost connection; the server never refused it with a status.
      }
      answer.at = Date.now();
      answers.push(answer);
      await new Promise((r) => setTimeout(r, 20));
    }
  });
  return {
    answers,
    async stop() {
      stopped = true;
      await Promise.all(callers);
    },
  };
}

/** Answers between two moments that were not a 503 with retry-after and a transient problem. */
const badOutageAnswers = (answers: Answer[], from: number, to: number) =>
  answers.filter(
    (a) => a.at >= from && a.at <= to && !(a.status === 503 && a.retryAfter !== null && a.problem && a.recovery === 'transient'),
  );

/** Polls until `check` passes; resolves with how long that took. */
async function timeUntil(check: () => Promise<boolean>, timeoutMs: number): Promise<number> {
  const started = Date.now();
  await until('recovery', check, timeoutMs);
  return Date.now() - started;
}

/**
 * The whole service (`bin/start.ts`: API and workers) in its own process, against the given
 * database and Redis, with short waits so an outage shows within seconds; resolves with its URL.
 */
export async function startService(
  opts: { databaseUrl: string; redisUrl: string; prefix: string; dataDir: string; issuer: TestIssuer },
  extra: Record<string, string> = {},
): Promise<{ service: Started; url: string }> {
  const service = startScript(
    'bin/start.ts',
    cleanEnv({
      PORT: '0',
      HOST: '127.0.0.1',
      DATABASE_URL: opts.databaseUrl,
      REDIS_URL: opts.redisUrl,
      REDIS_PREFIX: opts.prefix,
      DATA_DIR: opts.dataDir,
      AUTH_ISSUER: TEST_ISSUER,
      AUTH_AUDIENCE: TEST_AUDIENCE,
      AUTH_JWKS_URL: opts.issuer.url,
      RATE_LIMIT_MAX: '100000',
      DB_ACQUIRE_TIMEOUT_MS: '2000',
      SUPPLIER_TIMEOUT_MS: '2500',
      ATTEMPT_STUCK_GRACE_MS: '500',
      WORKER_LOCK_DURATION_MS: '2000',
      WORKER_STALLED_INTERVAL_MS: '1000',
      OUTBOX_RELAY_INTERVAL_MS: '200',
      ...extra,
    }),
  );
  const [, url] = await service.waitFor(/listening on (http:\/\/(?:127\.0\.0\.1|localhost):\d+)/, 120_000);
  return { service, url: url! };
}

/** The campaign the outage load creates, over and over. */
export const OUTAGE_CAMPAIGN = {
  name: 'Outage',
  clientName: 'Acme',
  startDate: '2099-03-01',
  endDate: '2099-03-31',
  budgetMinor: 50_000,
  maximumCommitmentMinor: 50_000,
  channels: ['ctv'],
};

/** Creating and listing campaigns: each request needs the database, Redis (rate limit) and auth. */
export const CAMPAIGN_TRAFFIC = [
  {
    operation: 'createCampaign',
    make: () => ({
      path: '/api/v1/campaigns',
      init: { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(OUTAGE_CAMPAIGN) },
    }),
  },
  { operation: 'listCampaigns', make: () => ({ path: '/api/v1/campaigns?limit=5' }) },
];

/** The error lines a service logged, outages (503s) left out: what a 500 was. */
const errorsLogged = (output: string) =>
  output
    .split('\n')
    .filter((l) => l.includes('"level":50') && !/database_unavailable|dependency_unavailable|status code 503/.test(l))
    .map((l) => l.slice(0, 3000))
    .join('\n');

export interface OutageRun {
  /** When the server was gone, when its return began, and when it answered again. */
  down: number;
  restoring: number;
  back: number;
  /** From the server's return to the service's first good answer. */
  recoveryMs: number;
  readyDuring: number;
  readyAfter: number;
  /** From the server's return to the first ready `/readyz`. */
  readyMs: number;
}

/**
 * Takes `server` away for `outageMs` while `load` runs, asks `/readyz` during it, brings the
 * server back and measures how soon the service answers a database-backed read again.
 */
export async function takeAway(
  server: Dedicated,
  service: { url: string; api: ApiClient; token: string },
  outageMs: number,
  onDown: () => Promise<void> = async () => undefined,
): Promise<OutageRun> {
  await server.stop();
  const down = Date.now();
  await onDown();
  await new Promise((r) => setTimeout(r, 1000));
  const readyDuring = (await fetch(`${service.url}/readyz`)).status;
  await new Promise((r) => setTimeout(r, outageMs - (Date.now() - down)));
  const restoring = Date.now();
  await server.start();
  const back = Date.now();
  const recoveryMs = await timeUntil(
    async () => (await service.api.fetch('/api/v1/campaigns?limit=1', { token: service.token })).status === 200,
    30_000,
  );
  let readyAfter = 0;
  await until('readiness', async () => (readyAfter = (await fetch(`${service.url}/readyz`)).status) === 200, 30_000).catch(() => undefined);
  const readyMs = Date.now() - back;
  return { down, restoring, back, recoveryMs, readyDuring, readyAfter, readyMs };
}

/** What the load saw: other 5xx, answers during the outage, the bad ones among them, campaigns created. */
export function judge(answers: Answer[], run: OutageRun) {
  // Half a second for requests already under way when the server went.
  const from = run.down + 500;
  return {
    fiveHundreds: answers.filter((a) => typeof a.status === 'number' && a.status >= 500 && a.status !== 503),
    during: answers.filter((a) => a.at > from && a.at < run.restoring),
    bad: badOutageAnswers(answers, from, run.restoring),
    created: answers.filter((a) => a.operation === 'createCampaign' && a.status === 201).length,
  };
}

/** The figure's part that both outages share. */
export const outageFigure = (answers: Answer[], run: OutageRun, v: ReturnType<typeof judge>, what: string) =>
  `${answers.length} requests, ${v.during.length} during the outage, ${v.during.length - v.bad.length} of them 503 with retry-after, ` +
  `${v.fiveHundreds.length} other 5xx, readiness ${run.readyDuring} during; answering again ${run.recoveryMs} ms after ${what} came back, ` +
  `ready again after ${run.readyMs} ms (its start took ${run.back - run.restoring} ms); ${v.created} campaigns acknowledged`;

/** Clients only ever saw 503 with retry-after during the outage, and the service answered and was ready again within 5 s. */
export function expectOutageHandled(run: OutageRun, v: ReturnType<typeof judge>, serviceOutput: string): void {
  if (v.fiveHundreds.length) throw new Error(`other 5xx: ${JSON.stringify(v.fiveHundreds)}\n${errorsLogged(serviceOutput)}`);
  expect(v.during.length).toBeGreaterThan(0);
  expect(v.bad).toEqual([]);
  expect(run.readyDuring).toBe(503);
  expect(run.readyAfter).toBe(200);
  expect(run.recoveryMs).toBeLessThan(5_000);
  expect(run.readyMs).toBeLessThan(5_000);
}
