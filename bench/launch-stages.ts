/**
 * Where a launch's CPU goes, stage by stage, against the durable line floor in the same run:
 * - **the request**: LAUNCHES launches, 10 at a time, with the supplier queues paused, so the
 *   machine does only what the API does for a launch (its transaction, the relay to the queues,
 *   the 202 with the booking);
 * - **the line operations**: the queues resumed, until every line is confirmed. Every job is
 *   waiting at once, so the workers' steps batch as well as they ever will: their best case.
 * The floor (floors/durable-line.ts) does both in one: its launch is an in-process insert and
 * seven jobs, its line operation a job with two small transactions.
 */
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { createDb, type Knex } from '../shared/db/knex';
import { queuePrefix } from '../shared/queues/names';
import { figures } from './support';
import { formatPerOperation, machineCpu, perOperation, type CpuShare } from './machine-cpu';
import { SEVEN, approvedSevenLineCampaign, callApi } from './campaigns';
import { RATE_LIMITS_LIFTED, REDIS_URL, startServiceProcess, type ServiceProcess } from './service-process';
import { durableLineFloorFor } from './floors/durable-line';

const LAUNCHES = Number(process.env.BENCH_LAUNCHES ?? 100);
const WARMUP_LAUNCHES = Number(process.env.BENCH_WARMUP_LAUNCHES ?? 20);

/** Launches, 10 at a time, each to its 202. */
async function launchAll(service: ServiceProcess, token: string, campaigns: string[]): Promise<void> {
  const queue = [...campaigns];
  await Promise.all(
    Array.from({ length: 10 }, async () => {
      for (let id = queue.shift(); id; id = queue.shift()) await callApi(service.url, token, `/api/v1/campaigns/${id}/launch`, 'POST');
    }),
  );
}

/** Resolves once no booking of the service is short of confirmed (polled every 10 ms). */
async function allConfirmed(db: Knex): Promise<void> {
  const deadline = Date.now() + 300_000;
  for (;;) {
    const [{ n }] = (await db('bookings').whereNot({ status: 'confirmed' }).count({ n: '*' })) as Array<{ n: string }>;
    if (Number(n) === 0) return;
    if (Date.now() > deadline) throw new Error(`${n} bookings not confirmed after 300 s`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

export async function benchLaunchStages(): Promise<void> {
  console.log(
    `Launch stages (${LAUNCHES} seven-line sandbox launches, 10 at a time; the request with the supplier queues paused, then the lines)`,
  );
  const service = await startServiceProcess({ name: 'stages', env: RATE_LIMITS_LIFTED });
  const db = createDb(service.dbUrl, { max: 2 });
  const connection = new Redis(REDIS_URL, { maxRetriesPerRequest: null });
  const queues = SEVEN.map((c) => `supplier.sandbox-${c}`).map(
    (name) => new Queue(name, { connection, prefix: queuePrefix(service.prefix, name) }),
  );
  let request: CpuShare | null;
  let lines: CpuShare | null;
  try {
    const token = await service.devIssuer.sign({
      org: 'bench-org',
      user: 'bench-user',
      permissions: ['agent:approve', 'plan:approve', 'campaign:launch'],
    });
    const campaigns: string[] = [];
    for (let i = 0; i < WARMUP_LAUNCHES + LAUNCHES; i++) campaigns.push(await approvedSevenLineCampaign(service.url, token, `Stage ${i}`));
    // The warm-up goes all the way, as a launch would: statements planned, pools filled, code compiled.
    await launchAll(service, token, campaigns.slice(0, WARMUP_LAUNCHES));
    await allConfirmed(db);
    for (const q of queues) await q.pause();
    const requestCpu = machineCpu(service.pid);
    await launchAll(service, token, campaigns.slice(WARMUP_LAUNCHES));
    request = requestCpu.stop();
    const linesCpu = machineCpu(service.pid);
    for (const q of queues) await q.resume();
    await allConfirmed(db);
    lines = linesCpu.stop();
  } finally {
    await Promise.all(queues.map((q) => q.close()));
    connection.disconnect();
    await db.destroy();
    await service.stop();
  }
  const floor = await durableLineFloorFor(LAUNCHES, WARMUP_LAUNCHES);
  if (!request || !lines || !floor.cpu) {
    console.log('  (no /proc: CPU by stage is not measured here)\n');
    return;
  }
  const operations = LAUNCHES * 7;
  const requestPerOp = perOperation(request, operations);
  const linesPerOp = perOperation(lines, operations);
  const floorPerOp = perOperation(floor.cpu, floor.operations);
  console.log(`  CPU ms per line operation, the request alone     ${formatPerOperation(requestPerOp)}`);
  console.log(`  CPU ms per line operation, the lines alone       ${formatPerOperation(linesPerOp)}`);
  console.log(`  CPU ms per floor operation (bench = the floor)   ${formatPerOperation(floorPerOp)}`);
  console.log(
    `  machine CPU per operation / floor's: the request ${(requestPerOp.machine! / floorPerOp.machine!).toFixed(2)}, the lines ${(linesPerOp.machine! / floorPerOp.machine!).toFixed(2)}\n`,
  );
  figures.push(
    {
      name: "machine CPU per line operation, the launch request alone / the floor's",
      value: requestPerOp.machine,
      baseline: floorPerOp.machine,
      ratio: requestPerOp.machine! / floorPerOp.machine!,
      target: 'measured',
    },
    {
      name: "machine CPU per line operation, the line operations alone / the floor's",
      value: linesPerOp.machine,
      baseline: floorPerOp.machine,
      ratio: linesPerOp.machine! / floorPerOp.machine!,
      target: 'measured',
    },
  );
}
