import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { Client } from 'pg';
import { figures } from './support';

const ADMIN_URL = process.env.BENCH_DATABASE_URL ?? process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const REDIS_URL = process.env.BENCH_REDIS_URL ?? process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';
const SETTLE_MS = 5_000;

const freePort = () =>
  new Promise<number>((resolve) => {
    const server = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });

const rssOf = (pid: number) => Number(/VmRSS:\s+(\d+)/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0) / 1024;

/**
 * The resident memory of `npm start`'s process (API and workers in one process, as
 * `bin/start.ts` runs them) once it is ready and settled, on a database of its own.
 * PostgreSQL and Redis are separate servers and not counted.
 */
export async function benchIdleRss(): Promise<void> {
  const dbName = `fdbench_rss_${randomBytes(4).toString('hex')}`;
  const admin = new Client({ connectionString: ADMIN_URL });
  await admin.connect();
  await admin.query(`create database ${dbName}`);
  const dbUrl = new URL(ADMIN_URL);
  dbUrl.pathname = `/${dbName}`;
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'flightdeck-rss-'));
  const port = await freePort();
  const child = spawn(process.execPath, ['--import', 'tsx', 'bin/start.ts'], {
    env: {
      ...process.env,
      DATABASE_URL: dbUrl.toString(),
      REDIS_URL,
      REDIS_PREFIX: `fdbench:rss:${randomBytes(4).toString('hex')}`,
      PORT: String(port),
      HOST: '127.0.0.1',
      DATA_DIR: dataDir,
      LOG_LEVEL: 'silent',
    },
    stdio: 'ignore',
  });
  try {
    const deadline = Date.now() + 60_000;
    for (;;) {
      const ready = await fetch(`http://127.0.0.1:${port}/readyz`).then(
        (r) => r.ok,
        () => false,
      );
      if (ready) break;
      if (Date.now() > deadline || child.exitCode !== null) throw new Error('npm start did not become ready');
      await new Promise((r) => setTimeout(r, 200));
    }
    await new Promise((r) => setTimeout(r, SETTLE_MS));
    const mb = rssOf(child.pid!);
    console.log(`RSS of npm start (API and workers, one process), ready and idle: ${mb.toFixed(0)} MB\n`);
    figures.push({ name: 'RSS of npm start, idle', value: mb, unit: 'MB', target: '< 250 MB', met: mb < 250 });
  } finally {
    child.kill('SIGTERM');
    await new Promise((r) => (child.exitCode !== null ? r(undefined) : child.once('exit', r)));
    await admin.query(`drop database if exists ${dbName} with (force)`);
    await admin.end();
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}
