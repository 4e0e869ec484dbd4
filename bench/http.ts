import { Redis } from 'ioredis';
import { pixelStreamKey } from '../shared/pixel/pixel-stream';
import { cpuProfiler, measureAlternating, printPair } from './support';
import type { BenchService } from './service';
import { approvedSevenLineCampaign, callApi } from './campaigns';
import { startFloorServer } from './floors/start-floor';

/** Pageviews of the bench's pixel key in PostgreSQL. */
const storedPageviews = async (service: BenchService) =>
  Number((await service.db('pixel_events').where({ pixel_key: service.pixelKey }).count({ n: '*' }))[0]!.n);

/** Waits until the pixel writer has stored every accepted pageview; returns how long that took. */
async function drainPixelStream(service: BenchService, timeoutMs = 120_000): Promise<number> {
  const redis = new Redis(service.redisUrl);
  const started = Date.now();
  try {
    while ((await redis.xlen(pixelStreamKey(service.prefix))) > 0) {
      if (Date.now() - started > timeoutMs) throw new Error('pixel writer did not drain the stream in time');
      await new Promise((r) => setTimeout(r, 50));
    }
    return Date.now() - started;
  } finally {
    redis.disconnect();
  }
}

/** A measured slice under a profiler (a no-op unless BENCH_CPU_PROF_DIR is set); the last slice's profile is kept. */
async function profiled<T>(profiler: ReturnType<typeof cpuProfiler>, run: () => Promise<T>): Promise<T> {
  await profiler.start();
  try {
    return await run();
  } finally {
    await profiler.stop();
  }
}

/**
 * Each route against its floor (floors/floor-server.ts, a process of its own): the auth context
 * against bare express sending the same body, the pixel against bare express appending to a
 * Redis stream, a seven-line booking's read against bare express and one PostgreSQL query.
 */
export async function benchHttp(service: BenchService): Promise<void> {
  const auth = { authorization: `Bearer ${service.token}` };
  const contextBody = await (await fetch(`${service.url}/api/v1/auth/context`, { headers: auth })).text();
  const floor = await startFloorServer({
    contextBody,
    redisUrl: service.redisUrl,
    streamKey: `${service.prefix}:floor-pixel`,
    databaseUrl: service.dbUrl,
  });
  const onFloor = { cpuPid: floor.pid };
  try {
    console.log('HTTP (autocannon)');
    const contextProfiler = cpuProfiler('auth-context');
    printPair(
      await measureAlternating(
        { name: 'GET /api/v1/auth/context', url: `${service.url}/api/v1/auth/context`, opts: { headers: auth } },
        { name: 'floor: bare express, same body', url: `${floor.url}/context`, opts: onFloor },
        (run) => profiled(contextProfiler, run),
      ),
    );

    const campaignId = await approvedSevenLineCampaign(service.url, service.token, 'Read bench');
    const { booking } = await callApi(service.url, service.token, `/api/v1/campaigns/${campaignId}/launch`, 'POST');
    const readProfiler = cpuProfiler('booking-read');
    printPair(
      await measureAlternating(
        { name: 'GET /api/v1/bookings/{id}', url: `${service.url}/api/v1/bookings/${booking.id as string}`, opts: { headers: auth } },
        { name: 'floor: bare express + one query', url: `${floor.url}/bookings/${booking.id as string}`, opts: onFloor },
        (run) => profiled(readProfiler, run),
      ),
    );

    const body = JSON.stringify({ kind: 'pageview', event: 'view', valueMinor: 100 });
    const headers = { 'content-type': 'application/json' };
    const storedBefore = await storedPageviews(service);
    // The profile is of the service's last pixel slice alone.
    const profiler = cpuProfiler('pixel');
    const pixel = await measureAlternating(
      { name: 'POST /api/v1/t/{pixelKey}', url: `${service.url}/api/v1/t/${service.pixelKey}`, opts: { method: 'POST', headers, body } },
      { name: 'floor: bare express + XADD', url: `${floor.url}/t`, opts: { method: 'POST', headers, body, ...onFloor } },
      (run) => profiled(profiler, run),
    );
    // Every acknowledged pageview must reach PostgreSQL: count them once the writer has caught up.
    const drainMs = await drainPixelStream(service);
    const stored = (await storedPageviews(service)) - storedBefore;
    const accepted = pixel.service.ok2xx;
    // Requests still in flight when autocannon stops may be stored without being counted as answered.
    const lost = Math.max(0, accepted - stored);
    Object.assign(printPair(pixel), { accepted, stored, lost, drainMs });
    console.log(`  stored ${stored} of ${accepted} accepted (${lost} lost), stream drained ${drainMs} ms after the run`);
    console.log('');
  } finally {
    await floor.close();
  }
}
