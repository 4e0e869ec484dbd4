import { Cluster, Redis, type ClusterNode, type RedisOptions } from 'ioredis';

/** A connection to the deployment's Redis: one server, or a Redis Cluster. */
export type RedisClient = Redis | Cluster;

/**
 * Where the deployment's Redis is: one server's URL, or a Redis Cluster's seed nodes
 * (REDIS_CLUSTER_NODES), which then take their credentials and TLS from the URL.
 */
export interface RedisTarget {
  url: string;
  clusterNodes: readonly string[];
}

export const redisTarget = (url: string, clusterNodes: readonly string[] = []): RedisTarget => ({ url, clusterNodes });

/**
 * Reconnect attempts while Redis is away, at most a second apart: the service is back within
 * about a second of Redis (ioredis's default waits up to 2 s between attempts, and with the
 * ready check a long outage cost nearly 3 s). An attempt at a dead Redis costs next to nothing.
 */
const reconnectSoon = (attempt: number) => Math.min(attempt * 100, 1000);

/** What every node of a cluster is connected with: the URL's credentials and TLS. */
function nodeOptionsOf(url: string): RedisOptions {
  const u = new URL(url);
  return {
    ...(u.username ? { username: decodeURIComponent(u.username) } : {}),
    ...(u.password ? { password: decodeURIComponent(u.password) } : {}),
    ...(u.protocol === 'rediss:' ? { tls: {} } : {}),
  };
}

function seedOf(node: string): ClusterNode {
  const at = node.lastIndexOf(':');
  return { host: node.slice(0, at), port: Number(node.slice(at + 1)) };
}

/**
 * A client for the target. On a cluster, the client follows the slot map: each command goes to
 * the primary of its key's slot, and after a failover (MOVED, CLUSTERDOWN) to the new primary.
 */
function connect(target: RedisTarget, options: RedisOptions): RedisClient {
  if (!target.clusterNodes.length) return new Redis(target.url, options);
  const { lazyConnect, enableOfflineQueue, enableReadyCheck, retryStrategy, ...perNode } = options;
  return new Cluster(target.clusterNodes.map(seedOf), {
    redisOptions: { ...perNode, ...nodeOptionsOf(target.url) },
    ...(lazyConnect !== undefined ? { lazyConnect } : {}),
    ...(enableOfflineQueue !== undefined ? { enableOfflineQueue } : {}),
    ...(enableReadyCheck !== undefined ? { enableReadyCheck } : {}),
    ...(retryStrategy ? { clusterRetryStrategy: (attempt: number) => retryStrategy(attempt) ?? null } : {}),
    // A failover takes the cluster's node timeout; commands wait for it rather than fail at once.
    retryDelayOnClusterDown: 200,
    retryDelayOnTryAgain: 200,
    retryDelayOnMoved: 50,
    slotsRefreshTimeout: 2000,
  });
}

const asTarget = (target: RedisTarget | string): RedisTarget => (typeof target === 'string' ? redisTarget(target) : target);

/**
 * API-side Redis: fail fast. A request must not hang waiting for a dead Redis;
 * the caller turns the error into a 503.
 */
export function createApiRedis(target: RedisTarget | string, extra: RedisOptions = {}): RedisClient {
  return connect(asTarget(target), {
    lazyConnect: true,
    enableOfflineQueue: false,
    maxRetriesPerRequest: 1,
    connectTimeout: 2000,
    commandTimeout: 2000,
    retryStrategy: reconnectSoon,
    ...extra,
  });
}

/** Worker-side Redis for BullMQ: blocking commands need `maxRetriesPerRequest: null`. */
export function createWorkerRedis(target: RedisTarget | string): RedisClient {
  return connect(asTarget(target), { maxRetriesPerRequest: null, enableReadyCheck: true, retryStrategy: reconnectSoon });
}

/**
 * Keys the per-request rate-limit script touches together (counters and the staff version): the
 * hash tag keeps them in one Redis Cluster slot, as a multi-key script requires.
 */
export const edgeKeyPrefix = (prefix: string): string => `${prefix}:{edge}`;

export function key(prefix: string, ...parts: string[]): string {
  return [prefix, ...parts].join(':');
}

export type { Redis, Cluster };
