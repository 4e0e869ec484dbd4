import { Queue } from 'bullmq';
import type { Redis } from 'ioredis';
import { MAINTENANCE_QUEUE, queuePrefix } from '../../../shared/queues/names';
import type { TestEnv } from '../../support/api';
import { TEST_REDIS_URL } from '../../support/env';
import { cleanEnv, startScript, type Started } from '../../support/processes';
import { until } from '../../support/wait';

/** Runs `fn` over `items` with at most `limit` calls in flight. */
export async function mapLimit<T, R>(items: readonly T[], limit: number, fn: (item: T, i: number) => Promise<R>): Promise<R[]> {
  const out: R[] = new Array(items.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(limit, items.length) }, async () => {
      while (next < items.length) {
        const i = next++;
        out[i] = await fn(items[i]!, i);
      }
    }),
  );
  return out;
}

/**
 * Worker processes (`bin/worker.ts`, every queue) that can be SIGKILLed and replaced while
 * they work, as a host crash or an OOM kill would do it.
 */
export class WorkerFleet {
  private readonly live: Started[] = [];
  private readonly dead: Started[] = [];
  private readonly startedAt = new Map<Started, number>();
  kills = 0;
  private chaos: Promise<void> | null = null;
  private stopChaos = false;

  constructor(
    private readonly env: NodeJS.ProcessEnv,
    private readonly size: number,
  ) {}

  start(): void {
    while (this.live.length < this.size) {
      const worker = startScript('bin/worker.ts', this.env);
      this.startedAt.set(worker, Date.now());
      this.live.push(worker);
    }
  }

  /**
   * SIGKILLs a worker picked at random among those up for `upForMs` (so that kills land on
   * workers at work, not ones still starting) and starts its replacement at once.
   */
  async killOne(random: () => number, upForMs = 0): Promise<void> {
    const candidates = this.live.filter((w) => Date.now() - this.startedAt.get(w)! >= upForMs);
    if (!candidates.length) return;
    const victim = candidates[Math.floor(random() * candidates.length)]!;
    this.live.splice(this.live.indexOf(victim), 1);
    victim.child.kill('SIGKILL');
    await victim.stop();
    this.dead.push(victim);
    this.kills++;
    this.start();
  }

  /** Every `minMs`–`maxMs`, kills a random worker that has been up for `upForMs`, until `calm()`. */
  startChaos(random: () => number, minMs: number, maxMs: number, upForMs: number): void {
    this.chaos = (async () => {
      while (!this.stopChaos) {
        await new Promise((r) => setTimeout(r, minMs + random() * (maxMs - minMs)));
        if (!this.stopChaos) await this.killOne(random, upForMs);
      }
    })();
  }

  async calm(): Promise<void> {
    this.stopChaos = true;
    await this.chaos;
  }

  /** Output of every worker that ever ran, for a failure message. */
  output(): string {
    return [...this.dead, ...this.live].map((w) => w.output()).join('\n');
  }

  async close(): Promise<void> {
    await this.calm();
    await Promise.all(this.live.splice(0).map((w) => w.stop()));
  }
}

/**
 * Asks the running workers to do their scheduled housekeeping now (stuck-attempt sweep, retry
 * of jobs that failed before sending anything) instead of waiting for its schedule.
 */
export async function runHousekeepingNow(redis: Redis, prefix: string): Promise<void> {
  const queue = new Queue(MAINTENANCE_QUEUE, { connection: redis, prefix: queuePrefix(prefix, MAINTENANCE_QUEUE) });
  try {
    const jobs = await Promise.all([queue.add('sweep-stuck-attempts', {}), queue.add('retry-unsent', {})]);
    // A worker killed while it ran scheduled housekeeping leaves its lock to expire first.
    await until(
      'the housekeeping jobs to finish',
      async () => {
        const states = await Promise.all(jobs.map((j) => queue.getJobState(j.id!)));
        return states.every((s) => s === 'completed' || s === 'failed');
      },
      60_000,
    );
  } finally {
    await queue.close();
  }
}

/** The API alone (`bin/web.ts`) as its own process, on a free port; resolves with its base URL. */
export async function startApiProcess(env: NodeJS.ProcessEnv): Promise<{ process: Started; url: string }> {
  const started = startScript('bin/web.ts', { ...env, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'info' });
  const [, url] = await started.waitFor(/"url":"(http:\/\/127\.0\.0\.1:\d+)"/);
  return { process: started, url: url! };
}

/**
 * Worker processes on the test file's database, Redis prefix and data folder, tuned for being
 * killed: a killed worker's job is noticed within about two seconds, a supplier call or a stuck
 * attempt given up on within one or two, and the outbox relayed every 200 ms.
 */
export const killableFleet = (env: TestEnv, processes = 2) =>
  new WorkerFleet(
    cleanEnv({
      DATABASE_URL: env.database.url,
      REDIS_URL: TEST_REDIS_URL,
      REDIS_PREFIX: env.prefix,
      DATA_DIR: env.dataDir,
      SANDBOX_SLOW_MS: '300',
      WORKER_LOCK_DURATION_MS: '2000',
      WORKER_STALLED_INTERVAL_MS: '1000',
      SUPPLIER_TIMEOUT_MS: '2000',
      ATTEMPT_STUCK_GRACE_MS: '1000',
      OUTBOX_RELAY_INTERVAL_MS: '200',
    }),
    processes,
  );
