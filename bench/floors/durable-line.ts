/**
 * The durable line floor, run in a process of its own (`durableLineFloor`): what a line
 * operation's guarantees cost at least on the same PostgreSQL and Redis, with none of our code.
 * A launch inserts seven lines in one statement and adds seven jobs at once, one per channel
 * queue; each queue's BullMQ worker (concurrency as the service's supplier workers) commits an
 * open attempt, "calls" a supplier that does nothing, then commits the outcome (the line's
 * update, its event and the attempt's close) in a second transaction. Launches run 10 at a time,
 * each waiting for its seven lines, as the launch bench drives the service.
 */
import { fork } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { Queue, Worker } from 'bullmq';
import { Redis } from 'ioredis';
import { Client, Pool } from 'pg';
import { machineCpu, type CpuShare } from '../machine-cpu';
import { profileArgs } from '../support';
import { ADMIN_URL, REDIS_URL } from '../service-process';

export interface FloorRun {
  opsPerSecond: number;
  operations: number;
  /** The machine's CPU over the measured launches; `bench` is the floor's own process. */
  cpu: CpuShare | null;
}

const CHANNELS = ['ctv', 'audio', 'tv', 'cinema', 'dooh', 'search', 'social'];

const SCHEMA = `
  create table floor_lines (id uuid primary key, booking_id uuid not null, channel text not null, status text not null,
    version int not null default 0, attempt_id uuid, updated_at timestamptz not null default now());
  create index on floor_lines (booking_id);
  create table floor_attempts (id uuid primary key, line_id uuid not null references floor_lines(id), status text not null,
    created_at timestamptz not null default now(), finished_at timestamptz);
  create index on floor_attempts (line_id);
  create table floor_events (id uuid primary key, line_id uuid not null references floor_lines(id), action text not null,
    detail jsonb not null, created_at timestamptz not null default now());
  create index on floor_events (line_id);`;

async function run(): Promise<FloorRun> {
  const adminUrl = process.env.FLOOR_ADMIN_URL!;
  const launches = Number(process.env.FLOOR_LAUNCHES);
  const warmUp = Number(process.env.FLOOR_WARMUP_LAUNCHES);
  const concurrency = Number(process.env.FLOOR_CONCURRENCY);
  const dbName = `fdbench_floor_${randomBytes(4).toString('hex')}`;
  const prefix = `fdbench:floor:${randomBytes(4).toString('hex')}`;
  const admin = new Client({ connectionString: adminUrl });
  await admin.connect();
  await admin.query(`create database ${dbName}`);
  const url = new URL(adminUrl);
  url.pathname = `/${dbName}`;
  const pool = new Pool({ connectionString: url.toString(), max: 20 });
  // The database is dropped at the end with its connections: an idle one's goodbye is no failure.
  pool.on('error', () => {});
  const connection = new Redis(process.env.FLOOR_REDIS_URL!, { maxRetriesPerRequest: null });
  const queues = CHANNELS.map((c) => new Queue(`supplier-${c}`, { connection, prefix: `${prefix}:{${c}}` }));
  const waiting = new Map<string, { left: number; done: () => void }>();
  const workers: Worker[] = [];
  try {
    await pool.query(SCHEMA);
    for (const c of CHANNELS) {
      workers.push(
        new Worker(
          `supplier-${c}`,
          async (job) => {
            const { lineId, bookingId } = job.data as { lineId: string; bookingId: string };
            const attemptId = randomUUID();
            // First commit: the attempt is open before the supplier hears of it.
            await pool.query(
              `with a as (insert into floor_attempts (id, line_id, status) values ($1, $2, 'open'))
               update floor_lines set status = 'in-progress', attempt_id = $1, version = version + 1, updated_at = now()
                where id = $2 and status = 'queued'`,
              [attemptId, lineId],
            );
            // The supplier, doing nothing.
            await Promise.resolve();
            // Second commit: the outcome, its event and the attempt's close.
            const client = await pool.connect();
            try {
              await client.query('begin');
              await client.query(
                `update floor_lines set status = 'confirmed', version = version + 1, updated_at = now() where id = $1 and attempt_id = $2`,
                [lineId, attemptId],
              );
              await client.query(`insert into floor_events (id, line_id, action, detail) values ($1, $2, 'line.confirmed', $3)`, [
                randomUUID(),
                lineId,
                JSON.stringify({ attemptId }),
              ]);
              await client.query(`update floor_attempts set status = 'confirmed', finished_at = now() where id = $1`, [attemptId]);
              await client.query('commit');
            } catch (err) {
              await client.query('rollback');
              throw err;
            } finally {
              client.release();
            }
            const w = waiting.get(bookingId)!;
            if (--w.left === 0) w.done();
          },
          { connection, prefix: `${prefix}:{${c}}`, concurrency },
        ),
      );
    }
    const launch = async () => {
      const bookingId = randomUUID();
      const lines = CHANNELS.map((channel) => ({ id: randomUUID(), channel }));
      const done = new Promise<void>((resolve) => waiting.set(bookingId, { left: 7, done: resolve }));
      await pool.query(
        `insert into floor_lines (id, booking_id, channel, status)
         select id, $1, channel, 'queued' from jsonb_to_recordset($2::jsonb) as l(id uuid, channel text)`,
        [bookingId, JSON.stringify(lines)],
      );
      await Promise.all(lines.map((l, i) => queues[i]!.add('book', { lineId: l.id, bookingId }, { removeOnComplete: true })));
      await done;
      waiting.delete(bookingId);
    };
    const tenAtATime = async (n: number) => {
      let left = n;
      await Promise.all(
        Array.from({ length: 10 }, async () => {
          while (left-- > 0) await launch();
        }),
      );
    };
    await tenAtATime(warmUp);
    const counting = machineCpu();
    const started = performance.now();
    await tenAtATime(launches);
    const seconds = (performance.now() - started) / 1000;
    return { opsPerSecond: (launches * 7) / seconds, operations: launches * 7, cpu: counting.stop() };
  } finally {
    await Promise.all(workers.map((w) => w.close()));
    for (const q of queues) {
      await q.obliterate({ force: true });
      await q.close();
    }
    connection.disconnect();
    await pool.end();
    await admin.query(`drop database if exists ${dbName} with (force)`);
    await admin.end();
  }
}

/** The floor for a launch bench's run: its launches and warm-up, on the bench's PostgreSQL and Redis, at the supplier workers' concurrency. */
export const durableLineFloorFor = (launches: number, warmUpLaunches: number): Promise<FloorRun> =>
  durableLineFloor({
    adminUrl: ADMIN_URL,
    redisUrl: REDIS_URL,
    launches,
    warmUpLaunches,
    concurrency: Number(process.env.ADAPTER_CONCURRENCY ?? 5),
  });

/** Runs the floor in a child process and returns what it measured. */
export function durableLineFloor(opts: {
  adminUrl: string;
  redisUrl: string;
  launches: number;
  warmUpLaunches: number;
  concurrency: number;
}): Promise<FloorRun> {
  const child = fork(__filename, [], {
    execArgv: ['--import', 'tsx', ...profileArgs()],
    env: {
      PATH: process.env.PATH,
      FLOOR_CHILD: '1',
      FLOOR_ADMIN_URL: opts.adminUrl,
      FLOOR_REDIS_URL: opts.redisUrl,
      FLOOR_LAUNCHES: String(opts.launches),
      FLOOR_WARMUP_LAUNCHES: String(opts.warmUpLaunches),
      FLOOR_CONCURRENCY: String(opts.concurrency),
    },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  return new Promise((resolve, reject) => {
    child.once('message', (m: { ok: true; run: FloorRun } | { ok: false; error: string }) =>
      m.ok ? resolve(m.run) : reject(new Error(`durable line floor: ${m.error}`)),
    );
    child.once('exit', (code) => reject(new Error(`durable line floor exited (${code}) before reporting`)));
  });
}

if (process.env.FLOOR_CHILD === '1' && process.send) {
  run().then(
    (r) => process.send!({ ok: true, run: r }, () => process.exit(0)),
    (err: Error) => process.send!({ ok: false, error: err.stack ?? err.message }, () => process.exit(1)),
  );
}
