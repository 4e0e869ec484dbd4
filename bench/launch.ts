import { Queue, Worker } from 'bullmq';
import { Redis } from 'ioredis';
import { randomBytes } from 'node:crypto';
import { createDb, type Knex } from '../shared/db/knex';
import { figures } from './support';
import { formatPerOperation, machineCpu, perOperation, type CpuShare } from './machine-cpu';
import { approvedSevenLineCampaign, callApi } from './campaigns';
import { pauses } from './pause';
import type { DbCounts } from './count-queries';
import { RATE_LIMITS_LIFTED, REDIS_URL, startServiceProcess, type ServiceProcess } from './service-process';

const LAUNCHES = Number(process.env.BENCH_LAUNCHES ?? 40);
/**
 * Launches run and waited for before the measured ones: a service that has just started plans
 * its statements, fills its pools and compiles its hot code on its first launches, which would
 * otherwise weigh on a short measured run.
 */
const WARMUP_LAUNCHES = Number(process.env.BENCH_WARMUP_LAUNCHES ?? 20);
const BARE_JOBS = Number(process.env.BENCH_BARE_JOBS ?? 2000);

const pct = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))]!;

/** The floor: BullMQ adding and processing no-op jobs on the same Redis, after a warm-up of its own. */
async function bareBullmq(redisUrl: string, prefix: string): Promise<{ perSecond: number; cpu: CpuShare | null }> {
  const connection = new Redis(redisUrl, { maxRetriesPerRequest: null });
  const queue = new Queue('bench-bare', { connection, prefix });
  let processed = 0;
  let target = 0;
  let resolveDone: () => void = () => {};
  const worker = new Worker(
    'bench-bare',
    async () => {
      if (++processed === target) resolveDone();
    },
    { connection, prefix, concurrency: 35 },
  );
  let cpu: CpuShare | null = null;
  const run = async (jobs: number, name: string) => {
    const done = new Promise<void>((r) => (resolveDone = r));
    target = processed + jobs;
    const started = performance.now();
    const counting = machineCpu();
    for (let i = 0; i < jobs; i++) await queue.add('noop', { i }, { jobId: `${name}-${i}`, removeOnComplete: true });
    await done;
    cpu = counting.stop();
    return (performance.now() - started) / 1000;
  };
  await run(Math.round(BARE_JOBS / 10), 'warm-up');
  const seconds = await run(BARE_JOBS, 'bare');
  await worker.close();
  await queue.obliterate({ force: true });
  await queue.close();
  connection.disconnect();
  return { perSecond: BARE_JOBS / seconds, cpu };
}

interface LaunchRun {
  /** Each launched campaign's pause, from its POST until all seven lines are stopped. */
  paused: number[];
  launchSeconds: number;
  totalSeconds: number;
  settled: number[];
  /** Each launch's request alone, to its 202. */
  accepted: number[];
  queries: number;
  transactions: number;
  peakRssMb: number;
  cpu: CpuShare | null;
}

/** WARMUP_LAUNCHES launches, 10 at a time, waited for until every line is confirmed; not measured. */
async function warmUp(service: ServiceProcess, token: string, db: Knex): Promise<void> {
  const campaigns: string[] = [];
  for (let i = 0; i < WARMUP_LAUNCHES; i++) campaigns.push(await approvedSevenLineCampaign(service.url, token, `Warm-up ${i}`));
  const bookings: string[] = [];
  for (let i = 0; i < campaigns.length; i += 10) {
    const batch = campaigns.slice(i, i + 10).map((id) => callApi(service.url, token, `/api/v1/campaigns/${id}/launch`, 'POST'));
    for (const { booking } of await Promise.all(batch)) bookings.push(booking.id as string);
  }
  const deadline = Date.now() + 120_000;
  while (bookings.length) {
    const [{ n }] = (await db('bookings').whereIn('id', bookings).whereNot({ status: 'confirmed' }).count({ n: '*' })) as Array<{
      n: string;
    }>;
    if (Number(n) === 0) return;
    if (Date.now() > deadline) throw new Error(`${n} warm-up launches not confirmed after 120 s`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** LAUNCHES launches, 10 at a time, each timed from its POST until all seven lines are confirmed. */
async function launches(service: ServiceProcess): Promise<LaunchRun> {
  const token = await service.devIssuer.sign({ org: 'bench-org', user: 'bench-user', permissions: ['agent:approve'] });
  const campaigns: string[] = [];
  for (let i = 0; i < LAUNCHES; i++) campaigns.push(await approvedSevenLineCampaign(service.url, token, `Bench ${i}`));

  // The watcher reads the child's database on a connection of the bench's own, so its polls
  // are not among the service's counted round trips.
  const db = createDb(service.dbUrl, { max: 2 });
  try {
    await warmUp(service, token, db);
    const before = await service.ask<DbCounts>('db-counts');
    await service.ask('profile-start');
    const counting = machineCpu(service.pid);
    const settled: number[] = [];
    const accepted: number[] = [];
    const launchStarted = performance.now();
    let launched = 0;
    // One poll every 10 ms for every booking still waiting, rather than one per booking: the
    // watcher must not load the database it measures.
    const waiting = new Map<string, () => void>();
    let watching = true;
    const watcher = (async () => {
      while (watching) {
        if (waiting.size) {
          const done: string[] = await db('bookings')
            .whereIn('id', [...waiting.keys()])
            .where({ status: 'confirmed' })
            .pluck('id');
          for (const id of done) {
            waiting.get(id)!();
            waiting.delete(id);
          }
        }
        await new Promise((r) => setTimeout(r, 10));
      }
    })();
    // The service's memory at its peak under the launches (sampled every 50 ms).
    let peakRssMb = service.rssMb();
    const sampler = setInterval(() => (peakRssMb = Math.max(peakRssMb, service.rssMb())), 50);
    const launchOne = async (campaignId: string) => {
      const t0 = performance.now();
      const { booking } = await callApi(service.url, token, `/api/v1/campaigns/${campaignId}/launch`, 'POST');
      launched++;
      accepted.push(performance.now() - t0);
      await new Promise<void>((resolve) => waiting.set(booking.id as string, resolve));
      settled.push(performance.now() - t0);
    };
    const queue = [...campaigns];
    let launchSeconds = 0;
    try {
      const all = Promise.all(
        Array.from({ length: 10 }, async () => {
          for (let id = queue.shift(); id; id = queue.shift()) {
            await launchOne(id);
            if (launched === LAUNCHES && !launchSeconds) launchSeconds = (performance.now() - launchStarted) / 1000;
          }
        }),
      );
      // Bookings a dead service never confirms must not keep the bench waiting.
      await Promise.race([all, service.died]);
    } finally {
      watching = false;
      clearInterval(sampler);
      await watcher;
    }
    const totalSeconds = (performance.now() - launchStarted) / 1000;
    const cpu = counting.stop();
    await service.ask('profile-stop');
    const after = await service.ask<DbCounts>('db-counts');
    const paused = await pauses(service, token, db, campaigns);
    return {
      paused,
      launchSeconds,
      totalSeconds,
      settled,
      accepted,
      queries: after.queries - before.queries,
      transactions: after.transactions - before.transactions,
      peakRssMb,
      cpu,
    };
  } finally {
    await db.destroy();
  }
}

/**
 * Launches per second, and launch-to-definite for a seven-line sandbox plan, against bare BullMQ
 * on the same Redis. The service is `npm start` in a child process of its own (its memory and
 * database round trips are its alone); the bench drives it over HTTP from this process.
 */
export async function benchLaunch(): Promise<void> {
  console.log(
    `Launch pipeline (${LAUNCHES} seven-line sandbox launches, 10 at a time, after ${WARMUP_LAUNCHES} not measured; npm start in a child process)`,
  );
  const service = await startServiceProcess({ name: 'launch', env: RATE_LIMITS_LIFTED, preload: 'bench/count-queries.ts' });
  let run: LaunchRun;
  try {
    run = await launches(service);
  } finally {
    await service.stop();
  }
  // The floor, measured once the service is gone so the two do not share the machine.
  const { perSecond: bare, cpu: bareCpu } = await bareBullmq(REDIS_URL, `fdbench:bare:${randomBytes(4).toString('hex')}`);
  const { settled } = run;
  const lineOps = (LAUNCHES * 7) / run.totalSeconds;

  console.log(`  launches per second (to 202)                   ${(LAUNCHES / run.launchSeconds).toFixed(1)}`);
  console.log(
    `  launch → all seven lines confirmed             p50 ${pct(settled, 50).toFixed(0)} ms   p99 ${pct(settled, 99).toFixed(0)} ms`,
  );
  console.log(`  launch → all seven lines confirmed             p95 ${pct(settled, 95).toFixed(0)} ms`);
  console.log(
    `  pause → all seven lines stopped                p50 ${pct(run.paused, 50).toFixed(0)} ms   p95 ${pct(run.paused, 95).toFixed(0)} ms`,
  );
  console.log(
    `  launch request alone (to 202)                  p50 ${pct(run.accepted, 50).toFixed(0)} ms   p95 ${pct(run.accepted, 95).toFixed(0)} ms`,
  );
  console.log(
    `  database round trips per launch (7 lines)      ${(run.queries / LAUNCHES).toFixed(1)}, transactions ${(run.transactions / LAUNCHES).toFixed(1)}`,
  );
  console.log(`  peak RSS of npm start (child process)          ${run.peakRssMb.toFixed(0)} MB`);
  console.log(`  supplier line operations per second            ${lineOps.toFixed(0)}`);
  console.log(`  bare BullMQ add + process per second           ${bare.toFixed(0)}`);
  console.log(`  ratio line operations / bare BullMQ jobs       ${(lineOps / bare).toFixed(2)}`);
  // Once the machine is busy, the ratio is one of CPU per operation: whose CPU it is says what could move it.
  const lineCpu = run.cpu && perOperation(run.cpu, LAUNCHES * 7);
  const bareJobCpu = bareCpu && perOperation(bareCpu, BARE_JOBS);
  if (run.cpu && lineCpu && bareCpu && bareJobCpu) {
    console.log(
      `  machine busy: launches / bare BullMQ           ${(run.cpu.machineBusy * 100).toFixed(0)}% / ${(bareCpu.machineBusy * 100).toFixed(0)}% of ${run.cpu.cores} cores`,
    );
    console.log(`  CPU ms per line operation                      ${formatPerOperation(lineCpu)}`);
    console.log(`  CPU ms per bare BullMQ job                     ${formatPerOperation(bareJobCpu)}`);
  }
  console.log('');
  const p95 = pct(settled, 95);
  figures.push(
    {
      name: 'supplier line operations per second',
      value: lineOps,
      baseline: bare,
      ratio: lineOps / bare,
      target: 'ratio >= 0.5',
      met: lineOps / bare >= 0.5,
      ...(run.cpu && { machineBusy: run.cpu.machineBusy, cpuMsPerOperation: lineCpu }),
      ...(bareCpu && { baselineMachineBusy: bareCpu.machineBusy, baselineCpuMsPerOperation: bareJobCpu }),
    },
    { name: 'seven-line launch to all lines definite, p95', value: p95, unit: 'ms', target: '< 250 ms', met: p95 < 250 },
    {
      name: 'seven-line pause to all lines stopped, p95',
      value: pct(run.paused, 95),
      unit: 'ms',
      target: '< 250 ms',
      met: pct(run.paused, 95) < 250,
    },
    {
      name: 'peak RSS of npm start under the launch bench',
      value: run.peakRssMb,
      unit: 'MB',
      target: '< 400 MB',
      met: run.peakRssMb < 400,
    },
    { name: 'database round trips per seven-line launch', value: run.queries / LAUNCHES },
    { name: 'transactions per seven-line launch', value: run.transactions / LAUNCHES },
  );
}
