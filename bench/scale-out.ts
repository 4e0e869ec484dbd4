/**
 * Scale-out: the same backlog of supplier line operations (seven-line sandbox launches, enqueued
 * while the queues are paused) moved by one worker process, then by two, on the same PostgreSQL
 * and Redis. Worker start-up is left out: the clock starts when the queues resume with every
 * process's heartbeat in. `npm run bench` runs it; `node --import tsx bench/scale-out.ts` alone.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { Client } from 'pg';
import { ConfigSchema } from '../shared/config/config';
import { createLogger } from '../shared/logger';
import { createDb, type Knex } from '../shared/db/knex';
import { migrateLatest } from '../shared/db/migrations';
import { freshHeartbeats } from '../shared/heartbeat';
import { queuePrefix, supplierQueueName } from '../shared/queues/names';
import { resolveAuth } from '../shared/auth/resolve-auth';
import { createApiDeps, startApi } from '../api/server';
import { SEVEN, approvedSevenLineCampaign, callApi } from './campaigns';
import { ADMIN_URL, REDIS_URL } from './service-process';
import { deleteKeys, madeByBench } from './leftovers';
import { profileArgs } from './support';

const LAUNCHES = Number(process.env.BENCH_SCALE_LAUNCHES ?? 100);
const ADVERTISERS = 25;
const QUEUES = SEVEN.map((channel) => supplierQueueName(`sandbox-${channel}`));
const DEFINITE = ['confirmed', 'rejected', 'reconciliation-required'];
const ROOT = path.resolve(__dirname, '..');

export interface ScaleOutResult {
  lineOperations: number;
  oneProcessOpsPerSecond: number;
  twoProcessesOpsPerSecond: number;
  ratio: number;
}

export interface Round {
  db: Knex;
  dbUrl: string;
  dataDir: string;
  prefix: string;
}

/** Enqueues LAUNCHES seven-line launches into paused queues, through the API on this round's prefix. */
async function enqueueBacklog(round: Round): Promise<Queue[]> {
  const connection = new Redis(REDIS_URL, { maxRetriesPerRequest: null });
  const queues = QUEUES.map((name) => new Queue(name, { connection, prefix: queuePrefix(round.prefix, name) }));
  await Promise.all(queues.map((q) => q.pause()));

  const config = ConfigSchema.parse({
    NODE_ENV: 'test',
    PORT: '0',
    HOST: '127.0.0.1',
    DATABASE_URL: round.dbUrl,
    REDIS_URL,
    REDIS_PREFIX: round.prefix,
    LOG_LEVEL: 'silent',
    DATA_DIR: round.dataDir,
    RATE_LIMIT_MAX: '100000000',
  });
  const auth = await resolveAuth(config);
  const deps = await createApiDeps({
    config,
    logger: createLogger('silent'),
    db: round.db,
    redisUrl: REDIS_URL,
    auth,
    database: 'external',
  });
  const api = await startApi(deps);
  // Many advertisers, as in production: one advertiser's launches share its wallet and would queue on it.
  const tokens = await Promise.all(
    Array.from({ length: ADVERTISERS }, (_, i) =>
      auth.devIssuer!.sign({ org: `scale-${i}`, user: 'bench-user', permissions: ['agent:approve', 'plan:approve', 'campaign:launch'] }),
    ),
  );
  try {
    for (let i = 0; i < LAUNCHES; i++) {
      const token = tokens[i % ADVERTISERS]!;
      const campaignId = await approvedSevenLineCampaign(api.url, token, `Scale ${i}`);
      await callApi(api.url, token, `/api/v1/campaigns/${campaignId}/launch`, 'POST');
    }
  } finally {
    await api.close();
  }
  const waiting = async () => (await Promise.all(queues.map((q) => q.getJobCountByTypes('wait')))).reduce((a, b) => a + b, 0);
  if ((await waiting()) !== LAUNCHES * 7) throw new Error(`expected ${LAUNCHES * 7} queued line operations, found ${await waiting()}`);
  return queues;
}

/** CPU seconds a child has used so far (Linux; 0 elsewhere), to show whether a worker was busy or waiting. */
function cpuSeconds(child: ChildProcess): number {
  try {
    const fields = fs.readFileSync(`/proc/${child.pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return 0;
  }
}

/** The machine's idle and total CPU ticks (Linux; zeros elsewhere): a second process only helps if there is idle CPU to take. */
function machineIdle(): { idle: number; total: number } {
  try {
    const ticks = fs.readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/).slice(1).map(Number);
    return { idle: ticks[3]! + ticks[4]!, total: ticks.reduce((a, b) => a + b, 0) };
  } catch {
    return { idle: 0, total: 0 };
  }
}

function startWorkerProcess(round: Round): ChildProcess {
  const env = {
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    NODE_ENV: 'test',
    DATABASE_URL: round.dbUrl,
    REDIS_URL,
    REDIS_PREFIX: round.prefix,
    DATA_DIR: round.dataDir,
    WORKER_QUEUES: 'suppliers',
    LOG_LEVEL: 'warn',
    HEARTBEAT_TTL_MS: '3000',
  };
  const child = spawn(process.execPath, [...profileArgs(), '--import', 'tsx', path.join(ROOT, 'bin/worker.ts')], {
    env,
    cwd: ROOT,
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const done = madeByBench('child', child);
  child.once('exit', done);
  return child;
}

/** Line operations per second moved by `processes` worker processes from a fresh backlog. */
async function measureRound(round: Round, processes: number): Promise<number> {
  const queues = await enqueueBacklog(round);
  const redis = queues[0]!.opts.connection as Redis;
  const children = Array.from({ length: processes }, () => startWorkerProcess(round));
  try {
    const deadline = Date.now() + 60_000;
    while ((await freshHeartbeats(redis, round.prefix, 3000)).filter((b) => b.role === 'worker').length < processes) {
      if (Date.now() > deadline) throw new Error('worker processes did not start within 60 s');
      await new Promise((r) => setTimeout(r, 100));
    }
    const cpuBefore = children.map(cpuSeconds);
    const idleBefore = machineIdle();
    const started = performance.now();
    await Promise.all(queues.map((q) => q.resume()));
    const total = LAUNCHES * 7;
    for (;;) {
      const [{ n }] = (await round.db('booking_lines').whereIn('status', DEFINITE).count({ n: '*' })) as Array<{ n: string }>;
      if (Number(n) >= total) break;
      if (performance.now() - started > 300_000) throw new Error(`only ${n} of ${total} line operations definite after 300 s`);
      await new Promise((r) => setTimeout(r, 20));
    }
    const seconds = (performance.now() - started) / 1000;
    const busy = children.map((c, i) => `${Math.round((100 * (cpuSeconds(c) - cpuBefore[i]!)) / seconds)}%`);
    const idle = machineIdle();
    const idleShare =
      idle.total > idleBefore.total ? Math.round((100 * (idle.idle - idleBefore.idle)) / (idle.total - idleBefore.total)) : 0;
    console.log(
      `  ${processes} worker process(es): ${total} line operations in ${seconds.toFixed(2)} s; CPU of each ${busy.join(', ')} of a core; machine idle ${idleShare}%`,
    );
    return total / seconds;
  } finally {
    await Promise.all(
      children.map(
        (c) => new Promise<void>((resolve) => (c.exitCode !== null ? resolve() : (c.once('exit', () => resolve()), c.kill('SIGTERM')))),
      ),
    );
    await Promise.all(queues.map((q) => q.close()));
    redis.disconnect();
  }
}

export async function withRound<T>(fn: (round: Round) => Promise<T>): Promise<T> {
  const name = `fdscale_${randomBytes(4).toString('hex')}`;
  const admin = new Client({ connectionString: ADMIN_URL });
  await admin.connect();
  await admin.query(`create database ${name}`);
  const dbUrl = new URL(ADMIN_URL);
  dbUrl.pathname = `/${name}`;
  const db = createDb(dbUrl.toString(), { max: 10 });
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'flightdeck-scale-'));
  const prefix = `fdscale:${randomBytes(4).toString('hex')}`;
  const made = [madeByBench('database', name), madeByBench('prefix', prefix), madeByBench('dir', dataDir)];
  try {
    await migrateLatest(db);
    return await fn({ db, dbUrl: dbUrl.toString(), dataDir, prefix });
  } finally {
    await db.destroy();
    await admin.query(`drop database if exists ${name} with (force)`);
    await admin.end();
    await deleteKeys(REDIS_URL, prefix);
    fs.rmSync(dataDir, { recursive: true, force: true });
    for (const done of made) done();
  }
}

/** One worker process, then two, each on its own fresh backlog of the same size. */
export async function benchScaleOut(): Promise<ScaleOutResult> {
  const total = LAUNCHES * 7;
  console.log(`Scale-out (${total} sandbox line operations per round, enqueued before the workers start)`);
  const one = await withRound((round) => measureRound(round, 1));
  const two = await withRound((round) => measureRound(round, 2));
  console.log(`  one worker process: line operations per second      ${one.toFixed(0)}`);
  console.log(`  two worker processes: line operations per second    ${two.toFixed(0)}`);
  console.log(`  ratio two / one                                     ${(two / one).toFixed(2)}`);
  console.log('');
  return { lineOperations: total, oneProcessOpsPerSecond: one, twoProcessesOpsPerSecond: two, ratio: two / one };
}

if (require.main === module) {
  benchScaleOut().then(
    () => process.exit(0),
    (err) => {
      console.error(err);
      process.exit(1);
    },
  );
}
