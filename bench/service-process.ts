/**
 * `npm start` as it runs in production: `bin/start.ts` (API and workers in one process) in a
 * child process of its own, on a fresh database, Redis prefix and data directory. The bench
 * drives it over HTTP and reads its memory from /proc; stopping it drops what it was given.
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { Client } from 'pg';
import type { DevIssuer } from '../shared/auth/dev-issuer';
import { loadConfig } from '../shared/config/config';
import { resolveAuth } from '../shared/auth/resolve-auth';
import { deleteKeys, madeByBench } from './leftovers';
import { profileArgs } from './support';

export const ADMIN_URL = process.env.BENCH_DATABASE_URL ?? process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
export const REDIS_URL = process.env.BENCH_REDIS_URL ?? process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';
/** Rate limits high enough that a bench never meets them. */
export const RATE_LIMITS_LIFTED = { RATE_LIMIT_MAX: '100000000', RATE_LIMIT_EXTRACT_MAX: '100000000' };

const ROOT = path.resolve(__dirname, '..');
const READY_WITHIN_MS = 60_000;
const EXIT_WITHIN_MS = 15_000;

export interface ServiceProcess {
  url: string;
  pid: number;
  /** The child's own database, for a bench that reads state the service wrote. */
  dbUrl: string;
  redisUrl: string;
  prefix: string;
  /** The development issuer the child trusts: both read it from the shared DATA_DIR. */
  devIssuer: DevIssuer;
  /** Rejects if the child exits before `stop`: a bench waiting on it races this rather than wait for ever. */
  died: Promise<never>;
  /** The child's resident memory now (VmRSS), in MB. */
  rssMb(): number;
  /** One request to a preloaded module over the IPC channel (`preload` only), answered by a message of the same kind. */
  /** Asks the preloaded module over IPC; `more` goes with the question (e.g. a profile's name). */
  ask<T>(kind: string, more?: Record<string, unknown>): Promise<T>;
  /** Stops the child (SIGTERM, then SIGKILL) and drops its database, Redis keys and data directory. */
  stop(): Promise<void>;
}

const freePort = () =>
  new Promise<number>((resolve) => {
    const server = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });

export const rssMbOf = (pid: number) => Number(/VmRSS:\s+(\d+)/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0) / 1024;

async function adminQuery(sql: string): Promise<void> {
  const admin = new Client({ connectionString: ADMIN_URL });
  await admin.connect();
  try {
    await admin.query(sql);
  } finally {
    await admin.end();
  }
}

/**
 * Starts `bin/start.ts` as `npm start` does and waits for /readyz. `env` is added to the
 * child's environment; `preload` is a module (path from the repository root) loaded with
 * `--import` before the service, reachable through `ask` over an IPC channel.
 */
export async function startServiceProcess(opts: { name: string; env?: Record<string, string>; preload?: string }): Promise<ServiceProcess> {
  const id = randomBytes(4).toString('hex');
  const dbName = `fdbench_${opts.name.replace(/\W/g, '_')}_${id}`;
  const dbUrl = new URL(ADMIN_URL);
  dbUrl.pathname = `/${dbName}`;
  const prefix = `fdbench:${opts.name}:${id}`;
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), `flightdeck-${opts.name}-`));
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    DATABASE_URL: dbUrl.toString(),
    REDIS_URL,
    REDIS_PREFIX: prefix,
    PORT: String(await freePort()),
    HOST: '127.0.0.1',
    DATA_DIR: dataDir,
    LOG_LEVEL: 'silent',
    ...opts.env,
  };
  let created = false;
  const made = [madeByBench('prefix', prefix), madeByBench('dir', dataDir)];
  const cleanUp = async () => {
    if (created) await adminQuery(`drop database if exists ${dbName} with (force)`);
    await deleteKeys(REDIS_URL, prefix);
    fs.rmSync(dataDir, { recursive: true, force: true });
    for (const done of made) done();
  };

  // The issuer's key is written before the child starts, so the child loads the same one.
  let devIssuer: DevIssuer | null;
  try {
    devIssuer = (await resolveAuth(loadConfig(env))).devIssuer;
    if (!devIssuer) throw new Error('the service process needs the development issuer (AUTH_JWKS_URL is set)');
    made.push(madeByBench('database', dbName));
    await adminQuery(`create database ${dbName}`);
    created = true;
  } catch (err) {
    await cleanUp();
    throw err;
  }

  const args = [...profileArgs(), '--import', 'tsx', ...(opts.preload ? ['--import', `./${opts.preload}`] : []), 'bin/start.ts'];
  const child = spawn(process.execPath, args, {
    cwd: ROOT,
    env,
    stdio: ['ignore', 'ignore', 'pipe', ...(opts.preload ? (['ipc'] as const) : [])],
  });
  made.push(madeByBench('child', child));
  // However the bench ends, the child does not outlive it.
  const killOnExit = () => child.kill('SIGKILL');
  process.once('exit', killOnExit);
  let stderr = '';
  child.stderr!.on('data', (chunk: Buffer) => (stderr = (stderr + chunk.toString()).slice(-4000)));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  let stopped: Promise<void> | undefined;
  const died = exited.then(() => {
    if (!stopped) throw new Error(`npm start (${opts.name}) exited (${child.exitCode ?? child.signalCode})\n${stderr}`);
    return new Promise<never>(() => {});
  });
  died.catch(() => {});
  const stop = () =>
    (stopped ??= (async () => {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill('SIGTERM');
        const timer = setTimeout(() => child.kill('SIGKILL'), EXIT_WITHIN_MS);
        await exited;
        clearTimeout(timer);
      }
      process.off('exit', killOnExit);
      await cleanUp();
    })());

  const url = `http://127.0.0.1:${env.PORT}`;
  try {
    const deadline = Date.now() + READY_WITHIN_MS;
    for (;;) {
      const ready = await fetch(`${url}/readyz`).then(
        (r) => r.ok,
        () => false,
      );
      if (ready) break;
      if (Date.now() > deadline || child.exitCode !== null) throw new Error(`npm start (${opts.name}) did not become ready\n${stderr}`);
      await new Promise((r) => setTimeout(r, 200));
    }
  } catch (err) {
    await stop();
    throw err;
  }

  return {
    url,
    pid: child.pid!,
    dbUrl: dbUrl.toString(),
    redisUrl: REDIS_URL,
    prefix,
    devIssuer,
    died,
    rssMb: () => rssMbOf(child.pid!),
    ask<T>(kind: string, more: Record<string, unknown> = {}) {
      return new Promise<T>((resolve, reject) => {
        if (!child.connected) return reject(new Error(`npm start (${opts.name}) has no IPC channel`));
        const onMessage = (m: { kind?: string }) => {
          if (m?.kind !== kind) return;
          child.off('message', onMessage);
          resolve(m as T);
        };
        child.on('message', onMessage);
        void exited.then(() => reject(new Error(`npm start (${opts.name}) exited before answering ${kind}`)));
        child.send({ ...more, kind });
      });
    },
    stop,
  };
}
