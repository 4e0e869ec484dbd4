/** `node --import tsx bench/http-only.ts`: only the HTTP figures (auth context, pixel ingest) against bare express. */
import { Redis } from 'ioredis';
import { startBenchService } from './service';
import { benchHttp } from './http';

async function main() {
  const service = await startBenchService();
  try {
    await benchHttp(service);
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
