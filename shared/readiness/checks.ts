import { withTimeout } from '../timeout';
import type { Knex } from 'knex';
import type { RedisClient } from '../redis';
import { pendingMigrations } from '../db/migrations';
import { ADAPTERS, catalogueProblems } from '../adapters/catalogue';
import { freshHeartbeats, type Heartbeat } from '../heartbeat';
import { BROWSER_JOBS_QUEUE, requiredQueues } from '../queues/names';
import type { AssetStore } from '../assets/asset-store';

export interface CheckResult {
  ok: boolean;
  detail: string;
  durationMs: number;
}

export interface ReadinessDeps {
  db: Knex;
  redis: RedisClient;
  redisPrefix: string;
  assets: AssetStore;
  executionModeDefault: 'sandbox' | 'live';
  heartbeatTtlMs: number;
}

type Check = (d: ReadinessDeps) => Promise<string>;

/**
 * A failure whose message is safe to show on the public readiness endpoint. Names of
 * migrations, queues, adapters and paths go only to the log (`internal`).
 */
class NotReady extends Error {
  constructor(
    message: string,
    readonly internal?: string,
  ) {
    super(message);
  }
}

const CHECKS: Record<string, Check> = {
  async database({ db }) {
    await db.raw('select 1');
    const pending = await pendingMigrations(db);
    if (pending.length) throw new NotReady(`${pending.length} migration(s) not applied`, `pending: ${pending.join(', ')}`);
    return 'reachable; migrations current';
  },
  async redis({ redis }) {
    const pong = await redis.ping();
    if (pong !== 'PONG') throw new NotReady(`unexpected ping reply ${pong}`);
    return 'reachable';
  },
  async adapterRegistry() {
    const problems = catalogueProblems();
    if (problems.length) throw new NotReady(`${problems.length} registry problem(s)`, problems.join('; '));
    return `${ADAPTERS.length} adapters registered`;
  },
  async credentials({ db, executionModeDefault }) {
    const rows = await db('supplier_credentials').where({ status: 'active' }).whereNotNull('approved_at').distinct('adapter_key');
    const approved = new Set(rows.map((r) => r.adapter_key as string));
    if (executionModeDefault === 'sandbox') return `not required in sandbox mode; ${approved.size} live adapter(s) approved`;
    const liveAdapters = ADAPTERS.filter((a) => a.requiresCredential);
    if (!liveAdapters.some((a) => approved.has(a.key))) throw new NotReady('live mode, but no live adapter has an approved credential');
    return `${approved.size} live adapter(s) approved`;
  },
  async creativeEvidence({ assets }) {
    try {
      await assets.checkWritable();
    } catch (err) {
      throw new NotReady('asset storage is not writable', (err as Error).message);
    }
    return 'asset storage writable';
  },
  async workers({ redis, redisPrefix, heartbeatTtlMs }) {
    const beats = await freshHeartbeats(redis, redisPrefix, heartbeatTtlMs);
    if (!beats.some((b) => b.role === 'scheduler')) throw new NotReady('no scheduler heartbeat');
    const covered = new Set(beats.filter((b) => b.role === 'worker').flatMap((b) => b.queues));
    const uncovered = requiredQueues().filter((q) => !covered.has(q));
    if (uncovered.length) throw new NotReady(`no live worker for ${uncovered.length} queue(s)`, `uncovered: ${uncovered.join(', ')}`);
    return `${beats.length} live heartbeat(s)`;
  },
  /** Browser jobs need a worker whose machine has Chromium; one that was asked to run them without it says so. */
  async browser({ redis, redisPrefix, heartbeatTtlMs }) {
    const service = browserService(await freshHeartbeats(redis, redisPrefix, heartbeatTtlMs));
    if (service.running) return `${service.running} worker(s) running browser jobs`;
    if (service.noBrowser) {
      throw new NotReady('browser jobs cannot run: no worker has a browser (Chromium not found)', service.why);
    }
    throw new NotReady('no live worker for browser jobs');
  },
};

const TIMEOUT_MS = 2500;

/** Runs every check in parallel; a failing check never hides another's result. */
export async function runReadinessChecks(
  deps: ReadinessDeps,
  logFailure: (check: string, err: unknown) => void = () => undefined,
): Promise<Record<string, CheckResult>> {
  const entries = await Promise.all(
    Object.entries(CHECKS).map(async ([name, check]) => {
      const started = performance.now();
      try {
        const detail = await withTimeout(check(deps), TIMEOUT_MS, () => new NotReady(`timed out after ${TIMEOUT_MS} ms`));
        return [name, { ok: true, detail, durationMs: Math.round(performance.now() - started) }] as const;
      } catch (err) {
        // Driver errors name hosts and ports: log them, show only that the check failed.
        if (!(err instanceof NotReady)) logFailure(name, err);
        else if (err.internal) logFailure(name, { message: err.internal });
        const detail = err instanceof NotReady ? err.message : 'unavailable';
        return [name, { ok: false, detail, durationMs: Math.round(performance.now() - started) }] as const;
      }
    }),
  );
  return Object.fromEntries(entries);
}

/**
 * Whether browser jobs can run, from the fresh heartbeats: how many workers run them, or why none
 * can (a worker that has the role but no Chromium says so; otherwise no process has the role).
 */
export function browserService(beats: Heartbeat[]): { running: number; why: string; noBrowser: boolean } {
  const workers = beats.filter((b) => b.role === 'worker');
  const running = workers.filter((b) => b.queues.includes(BROWSER_JOBS_QUEUE)).length;
  if (running) return { running, why: '', noBrowser: false };
  const without = workers.find((b) => b.unavailable?.[BROWSER_JOBS_QUEUE]);
  if (without) return { running: 0, why: without.unavailable![BROWSER_JOBS_QUEUE]!, noBrowser: true };
  return { running: 0, why: `no live worker process runs browser jobs (worker role "${BROWSER_JOBS_QUEUE}")`, noBrowser: false };
}
