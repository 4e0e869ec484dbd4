import { createDb, type Knex } from '../shared/db/knex';
import { figures } from './support';
import { formatPerOperation, machineCpu, perOperation, type CpuShare } from './machine-cpu';
import { approvedSevenLineCampaign, callApi } from './campaigns';
import { pauses, type PauseRun } from './pause';
import { bookingWatcher } from './booking-watcher';
import type { DbCounts } from './count-queries';
import { RATE_LIMITS_LIFTED, startServiceProcess, type ServiceProcess } from './service-process';
import { durableLineFloorFor } from './floors/durable-line';

const LAUNCHES = Number(process.env.BENCH_LAUNCHES ?? 100);
/**
 * Launches run and waited for before the measured ones: a service that has just started plans
 * its statements, fills its pools and compiles its hot code on its first launches, which would
 * otherwise weigh on a short measured run.
 */
const WARMUP_LAUNCHES = Number(process.env.BENCH_WARMUP_LAUNCHES ?? 20);
/** Launches measured one at a time, after the warm-up: the latency of a launch alone. */
const ALONE_LAUNCHES = Number(process.env.BENCH_ALONE_LAUNCHES ?? 20);

const pct = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))]!;

interface LaunchRun {
  /** Each launched campaign's pause, from its POST until all seven lines are stopped. */
  paused: PauseRun;
  launchSeconds: number;
  totalSeconds: number;
  settled: number[];
  /** Each launch's request alone, to its 202. */
  accepted: number[];
  /** Launches made one at a time, each to all lines definite. */
  alone: number[];
  queries: number;
  transactions: number;
  peakRssMb: number;
  cpu: CpuShare | null;
}

/** WARMUP_LAUNCHES launches, 10 at a time, waited for until every line is confirmed; not measured. Returns their campaigns. */
async function warmUp(service: ServiceProcess, token: string, db: Knex): Promise<string[]> {
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
    if (Number(n) === 0) return campaigns;
    if (Date.now() > deadline) throw new Error(`${n} warm-up launches not confirmed after 120 s`);
    await new Promise((r) => setTimeout(r, 20));
  }
  return campaigns;
}

/** LAUNCHES launches, 10 at a time, each timed from its POST until all seven lines are confirmed. */
async function launches(service: ServiceProcess): Promise<LaunchRun> {
  const token = await service.devIssuer.sign({
    org: 'bench-org',
    user: 'bench-user',
    permissions: ['agent:approve', 'plan:approve', 'campaign:launch'],
  });
  const campaigns: string[] = [];
  for (let i = 0; i < LAUNCHES; i++) campaigns.push(await approvedSevenLineCampaign(service.url, token, `Bench ${i}`));
  const lone: string[] = [];
  for (let i = 0; i < ALONE_LAUNCHES; i++) lone.push(await approvedSevenLineCampaign(service.url, token, `Alone ${i}`));

  // The watcher reads the child's database on a connection of the bench's own, so its polls
  // are not among the service's counted round trips.
  const db = createDb(service.dbUrl, { max: 2 });
  try {
    const warmedUp = await warmUp(service, token, db);
    // One at a time: nothing else in the pipeline, a 5 ms poll of the one booking.
    const alone: number[] = [];
    for (const id of lone) {
      const t0 = performance.now();
      const { booking } = await callApi(service.url, token, `/api/v1/campaigns/${id}/launch`, 'POST');
      while (
        (
          await db('bookings')
            .where({ id: booking.id as string })
            .first('status')
        ).status !== 'confirmed'
      ) {
        await new Promise((r) => setTimeout(r, 5));
      }
      alone.push(performance.now() - t0);
    }
    const before = await service.ask<DbCounts>('db-counts');
    await service.ask('profile-start');
    const counting = machineCpu(service.pid);
    const settled: number[] = [];
    const accepted: number[] = [];
    const launchStarted = performance.now();
    let launched = 0;
    const watcher = bookingWatcher(db, 'confirmed');
    // The service's memory at its peak under the launches (sampled every 50 ms).
    let peakRssMb = service.rssMb();
    const sampler = setInterval(() => (peakRssMb = Math.max(peakRssMb, service.rssMb())), 50);
    const launchOne = async (campaignId: string) => {
      const t0 = performance.now();
      const { booking } = await callApi(service.url, token, `/api/v1/campaigns/${campaignId}/launch`, 'POST');
      launched++;
      accepted.push(performance.now() - t0);
      await watcher.until(booking.id as string);
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
      clearInterval(sampler);
      await watcher.stop();
    }
    const totalSeconds = (performance.now() - launchStarted) / 1000;
    const cpu = counting.stop();
    await service.ask('profile-stop');
    const after = await service.ask<DbCounts>('db-counts');
    // The pauses warm up as the launches did: the warm-up campaigns are paused first, not measured.
    await pauses(service, token, db, warmedUp);
    await service.ask('profile-start', { name: 'pause-measured' });
    const paused = await pauses(service, token, db, campaigns);
    await service.ask('profile-stop');
    return {
      paused,
      launchSeconds,
      totalSeconds,
      settled,
      accepted,
      alone,
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
 * Launches per second, and launch-to-definite for a seven-line sandbox plan, against the durable
 * line floor (floors/durable-line.ts) on the same Redis and PostgreSQL. The service is `npm
 * start` in a child process of its own (its memory and database round trips are its alone); the
 * bench drives it over HTTP from this process.
 */
export async function benchLaunch(): Promise<void> {
  console.log(
    `Launch pipeline (${LAUNCHES} seven-line sandbox launches, 10 at a time, and ${ALONE_LAUNCHES} alone, after ${WARMUP_LAUNCHES} not measured; npm start in a child process)`,
  );
  const service = await startServiceProcess({ name: 'launch', env: RATE_LIMITS_LIFTED, preload: 'bench/count-queries.ts' });
  let run: LaunchRun;
  try {
    run = await launches(service);
  } finally {
    await service.stop();
  }
  // The floor, measured once the service is gone so the two do not share the machine.
  const floor = await durableLineFloorFor(LAUNCHES, WARMUP_LAUNCHES);
  const { settled } = run;
  const lineOps = (LAUNCHES * 7) / run.totalSeconds;
  const opsRatio = lineOps / floor.opsPerSecond;

  console.log(`  launches per second (to 202)                   ${(LAUNCHES / run.launchSeconds).toFixed(1)}`);
  console.log(
    `  launch → all seven lines confirmed             p50 ${pct(settled, 50).toFixed(0)} ms   p95 ${pct(settled, 95).toFixed(0)} ms   p99 ${pct(settled, 99).toFixed(0)} ms`,
  );
  console.log(
    `  launch alone → all seven lines confirmed       p50 ${pct(run.alone, 50).toFixed(0)} ms   p95 ${pct(run.alone, 95).toFixed(0)} ms`,
  );
  console.log(
    `  pause → all seven lines stopped                p50 ${pct(run.paused.settled, 50).toFixed(0)} ms   p95 ${pct(run.paused.settled, 95).toFixed(0)} ms`,
  );
  const phase = (name: keyof PauseRun['phases']) =>
    `p50 ${run.paused.phases[name].p50.toFixed(0)} / p95 ${run.paused.phases[name].p95.toFixed(0)} ms`;
  console.log(
    `    of which: request to 202 p50 ${pct(run.paused.accepted, 50).toFixed(0)} / p95 ${pct(run.paused.accepted, 95).toFixed(0)} ms; request and queue to the first line's start ${phase('requestToFirstStart')}; first to last start ${phase('firstToLastStart')}; last start to stopped ${phase('lastStartToStopped')}`,
  );
  console.log(
    `  launch request to its 202, 10 at a time      p50 ${pct(run.accepted, 50).toFixed(0)} ms   p95 ${pct(run.accepted, 95).toFixed(0)} ms`,
  );
  console.log(
    `  database round trips per launch (7 lines)      ${(run.queries / LAUNCHES).toFixed(1)}, transactions ${(run.transactions / LAUNCHES).toFixed(1)}`,
  );
  console.log(`  peak RSS of npm start (child process)          ${run.peakRssMb.toFixed(0)} MB`);
  console.log(`  supplier line operations per second            ${lineOps.toFixed(0)}`);
  console.log(`  durable line floor, operations per second      ${floor.opsPerSecond.toFixed(0)}`);
  console.log(`  ratio line operations / durable floor          ${opsRatio.toFixed(2)}`);
  // Once the machine is busy, the ratio is one of CPU per operation: whose CPU it is says what could move it.
  const lineCpu = run.cpu && perOperation(run.cpu, LAUNCHES * 7);
  const floorCpu = floor.cpu && perOperation(floor.cpu, floor.operations);
  const cpuRatio = lineCpu && floorCpu ? lineCpu.machine! / floorCpu.machine! : null;
  if (run.cpu && lineCpu && floor.cpu && floorCpu) {
    console.log(
      `  machine busy: launches / floor                 ${(run.cpu.machineBusy * 100).toFixed(0)}% / ${(floor.cpu.machineBusy * 100).toFixed(0)}% of ${run.cpu.cores} cores`,
    );
    console.log(`  CPU ms per line operation                      ${formatPerOperation(lineCpu)}`);
    console.log(`  CPU ms per floor operation (bench = the floor) ${formatPerOperation(floorCpu)}`);
    console.log(`  ratio machine CPU per operation / floor's      ${cpuRatio!.toFixed(2)}`);
  }
  console.log('');
  const p95 = pct(settled, 95);
  const aloneP95 = pct(run.alone, 95);
  const pauseP95 = pct(run.paused.settled, 95);
  figures.push(
    {
      name: 'supplier line operations per second',
      value: lineOps,
      baseline: floor.opsPerSecond,
      ratio: opsRatio,
      cpuRatio,
      target: "ratio >= 1.2, machine CPU per operation <= 0.7 of the floor's",
      met: opsRatio >= 1.2 && cpuRatio !== null && cpuRatio <= 0.7,
      ...(run.cpu && { machineBusy: run.cpu.machineBusy, cpuMsPerOperation: lineCpu }),
      ...(floor.cpu && { baselineMachineBusy: floor.cpu.machineBusy, baselineCpuMsPerOperation: floorCpu }),
    },
    { name: 'seven-line launch to all lines definite, p95, 10 at a time', value: p95, unit: 'ms', target: '< 150 ms', met: p95 < 150 },
    { name: 'seven-line launch to all lines definite, p95, alone', value: aloneP95, unit: 'ms', target: '< 40 ms', met: aloneP95 < 40 },
    { name: 'seven-line pause to all lines stopped, p95', value: pauseP95, unit: 'ms', target: '< 250 ms', met: pauseP95 < 250 },
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
