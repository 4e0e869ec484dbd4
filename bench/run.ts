/**
 * `npm run bench`: measures the service against baselines taken in the same run on the
 * same machine. Shared machines are noisy, so read the ratios, not the absolute figures.
 */
import { Redis } from 'ioredis';
import { BENCH_CONNECTIONS, BENCH_SECONDS } from './support';
import { startBenchService } from './service';
import { benchHttp } from './http';
import { benchLaunch } from './launch';
import { benchOverview } from './overview';
import { benchPersonas } from './personas';
import { benchScaleOut } from './scale-out';

async function main() {
  console.log(`Flightdeck benchmarks: ${BENCH_SECONDS}s per run, ${BENCH_CONNECTIONS} connections, node ${process.version}\n`);
  benchPersonas();
  const service = await startBenchService();
  try {
    // BENCH_ONLY=launch runs one part alone, for work on that part.
    const only = process.env.BENCH_ONLY;
    if (!only || only === 'http') await benchHttp(service);
    if (!only || only === 'launch') await benchLaunch(service);
    if (!only || only === 'overview') await benchOverview(service);
    if (!only || only === 'scale-out') await benchScaleOut();
  } finally {
    const redis = new Redis(service.redisUrl);
    const keys = await redis.keys(`${service.prefix}:*`);
    if (keys.length) await redis.del(...keys);
    redis.disconnect();
    await service.close();
  }
}

main().then(
  () => process.exit(0),
  (err) => {
    console.error(err);
    process.exit(1);
  },
);
