import http from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import { Redis } from 'ioredis';
import { pixelStreamKey } from '../shared/pixel/pixel-stream';
import { cpuProfiler, measureAlternating, printPair } from './support';
import type { BenchService } from './service';

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

/** A bare express app with the same response shapes: the floor our middleware stack is measured against. */
async function startBareExpress(): Promise<{ url: string; close(): Promise<void> }> {
  const app = express();
  app.get('/context', (_req, res) => {
    res.json({ user: { id: 'bench-user' }, advertiser: { id: 'bench-org' } });
  });
  app.post('/t', express.json(), (_req, res) => {
    res.status(202).json({ accepted: true, replayed: false });
  });
  const server = http.createServer(app);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}

export async function benchHttp(service: BenchService): Promise<void> {
  const bare = await startBareExpress();
  try {
    console.log('HTTP (autocannon)');
    printPair(
      await measureAlternating(
        {
          name: 'GET /api/v1/auth/context',
          url: `${service.url}/api/v1/auth/context`,
          opts: { headers: { authorization: `Bearer ${service.token}` } },
        },
        { name: 'bare express GET', url: `${bare.url}/context` },
      ),
    );

    const body = JSON.stringify({ kind: 'pageview', event: 'view', valueMinor: 100 });
    const headers = { 'content-type': 'application/json' };
    const storedBefore = await storedPageviews(service);
    // The profile is of the service's last pixel slice alone.
    const profiler = cpuProfiler('pixel');
    const pixel = await measureAlternating(
      { name: 'POST /api/v1/t/{pixelKey}', url: `${service.url}/api/v1/t/${service.pixelKey}`, opts: { method: 'POST', headers, body } },
      { name: 'bare express POST (json)', url: `${bare.url}/t`, opts: { method: 'POST', headers, body } },
      async (run) => {
        await profiler.start();
        try {
          return await run();
        } finally {
          await profiler.stop();
        }
      },
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
    await bare.close();
  }
}
