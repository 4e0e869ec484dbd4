import { spawn } from 'node:child_process';
import { Redis } from 'ioredis';
import type { Logger } from '../logger';

async function answers(url: string): Promise<boolean> {
  const probe = new Redis(url, {
    lazyConnect: true,
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
    connectTimeout: 1000,
  });
  probe.on('error', () => undefined);
  try {
    await probe.connect();
    return (await probe.ping()) === 'PONG';
  } catch {
    return false;
  } finally {
    probe.disconnect();
  }
}

/**
 * With no REDIS_URL: use 127.0.0.1:6379, starting `redis-server` from PATH when nothing
 * answers there. Without one, stop with a message that says how to get one.
 */
export async function ensureLocalRedis(url: string, autostart: boolean, logger: Logger): Promise<void> {
  if (await answers(url)) return;
  const port = new URL(url).port || '6379';
  if (!autostart) throw new Error(`Nothing answers at ${url} and REDIS_AUTOSTART=false.`);
  logger.info({ port }, 'no Redis answers; starting redis-server from PATH');
  await new Promise<void>((resolve, reject) => {
    const child = spawn(
      'redis-server',
      ['--port', port, '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--maxmemory-policy', 'noeviction', '--daemonize', 'yes'],
      { stdio: 'ignore' },
    );
    child.on('error', () =>
      reject(
        new Error(
          `No Redis answers at ${url} and redis-server is not on PATH. Install Redis 6.2+ (e.g. "apt-get install redis-server" or "brew install redis"), or set REDIS_URL.`,
        ),
      ),
    );
    child.on('exit', (code) => (code === 0 ? resolve() : reject(new Error(`redis-server exited with code ${code}`))));
  });
  for (let i = 0; i < 50; i++) {
    if (await answers(url)) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`redis-server was started but does not answer at ${url}.`);
}
