import { Queue, Worker } from 'bullmq';
import { Redis } from 'ioredis';
import type { BenchService } from './service';
import { figures } from './support';
import { approvedSevenLineCampaign, callApi } from './campaigns';

const LAUNCHES = Number(process.env.BENCH_LAUNCHES ?? 40);
const BARE_JOBS = Number(process.env.BENCH_BARE_JOBS ?? 2000);
const api = (service: BenchService, path: string, method: string, body?: unknown) =>
  callApi(service.url, service.token, path, method, body);

const pct = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))]!;

/** The floor: BullMQ adding and processing no-op jobs on the same Redis. */
async function bareBullmq(redisUrl: string, prefix: string): Promise<number> {
  const connection = new Redis(redisUrl, { maxRetriesPerRequest: null });
  const queue = new Queue('bench-bare', { connection, prefix });
  let processed = 0;
  let resolveDone: () => void;
  const done = new Promise<void>((r) => (resolveDone = r));
  const worker = new Worker(
    'bench-bare',
    async () => {
      if (++processed === BARE_JOBS) resolveDone();
    },
    { connection, prefix, concurrency: 35 },
  );
  const started = performance.now();
  for (let i = 0; i < BARE_JOBS; i++) await queue.add('noop', { i }, { jobId: `bare-${i}`, removeOnComplete: true });
  await done;
  const seconds = (performance.now() - started) / 1000;
  await worker.close();
  await queue.obliterate({ force: true });
  await queue.close();
  connection.disconnect();
  return BARE_JOBS / seconds;
}

/** Launches per second, and launch-to-definite for a seven-line sandbox plan, against bare BullMQ on the same Redis. */
export async function benchLaunch(service: BenchService): Promise<void> {
  console.log(`Launch pipeline (${LAUNCHES} seven-line sandbox launches, 10 at a time)`);
  const campaigns: string[] = [];
  for (let i = 0; i < LAUNCHES; i++) campaigns.push(await approvedSevenLineCampaign(service.url, service.token, `Bench ${i}`));

  // Database round trips and transactions of the service (the bench's own status polls are subtracted).
  let queries = 0;
  let transactions = 0;
  let polls = 0;
  const countQuery = (q: { sql?: string }) => {
    queries++;
    if (/^begin/i.test(q.sql ?? '')) transactions++;
  };
  service.db.on('query', countQuery);
  const settled: number[] = [];
  const launchStarted = performance.now();
  let launched = 0;
  // One poll every 10 ms for every booking still waiting, rather than one per booking: the
  // watcher must not load the database it measures.
  const waiting = new Map<string, () => void>();
  let watching = true;
  const watcher = (async () => {
    while (watching) {
      if (waiting.size) {
        polls++;
        const done: string[] = await service
          .db('bookings')
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
  let peakRss = process.memoryUsage().rss;
  const sampler = setInterval(() => (peakRss = Math.max(peakRss, process.memoryUsage().rss)), 50);
  const launchOne = async (campaignId: string) => {
    const t0 = performance.now();
    const { booking } = await api(service, `/api/v1/campaigns/${campaignId}/launch`, 'POST');
    launched++;
    await new Promise<void>((resolve) => waiting.set(booking.id as string, resolve));
    settled.push(performance.now() - t0);
  };
  const queue = [...campaigns];
  let launchSeconds = 0;
  await Promise.all(
    Array.from({ length: 10 }, async () => {
      for (let id = queue.shift(); id; id = queue.shift()) {
        await launchOne(id);
        if (launched === LAUNCHES && !launchSeconds) launchSeconds = (performance.now() - launchStarted) / 1000;
      }
    }),
  );
  const totalSeconds = (performance.now() - launchStarted) / 1000;
  watching = false;
  await watcher;
  clearInterval(sampler);
  service.db.off('query', countQuery);
  const lineOps = (LAUNCHES * 7) / totalSeconds;
  const bare = await bareBullmq(service.redisUrl, service.prefix);

  console.log(`  launches per second (to 202)                   ${(LAUNCHES / launchSeconds).toFixed(1)}`);
  console.log(
    `  launch → all seven lines confirmed             p50 ${pct(settled, 50).toFixed(0)} ms   p99 ${pct(settled, 99).toFixed(0)} ms`,
  );
  console.log(`  launch → all seven lines confirmed             p95 ${pct(settled, 95).toFixed(0)} ms`);
  const serviceQueries = queries - polls;
  console.log(
    `  database round trips per launch (7 lines)      ${(serviceQueries / LAUNCHES).toFixed(1)}, transactions ${(transactions / LAUNCHES).toFixed(1)}`,
  );
  console.log(`  peak RSS of the bench process (service inside)  ${(peakRss / 2 ** 20).toFixed(0)} MB`);
  console.log(`  supplier line operations per second            ${lineOps.toFixed(0)}`);
  console.log(`  bare BullMQ add + process per second           ${bare.toFixed(0)}`);
  console.log(`  ratio line operations / bare BullMQ jobs       ${(lineOps / bare).toFixed(2)}`);
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
    },
    { name: 'seven-line launch to all lines definite, p95', value: p95, unit: 'ms', target: '< 250 ms', met: p95 < 250 },
    { name: 'peak RSS under the launch bench', value: peakRss / 2 ** 20, unit: 'MB', target: '< 400 MB', met: peakRss < 400 * 2 ** 20 },
  );
}
