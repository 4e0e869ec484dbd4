import type { Config } from '../config/config';
import type { Logger } from '../logger';
import type { EmbeddedDatabase } from './embedded-postgres';
import { ensureLocalRedis } from './local-redis';

export const DEFAULT_REDIS_URL = 'redis://127.0.0.1:6379';

export interface ResolvedDatabase {
  url: string;
  embedded: EmbeddedDatabase | null;
}

/** DATABASE_URL, or the embedded development database (refused in production by config). */
export async function resolveDatabase(config: Config, logger: Logger): Promise<ResolvedDatabase> {
  if (config.DATABASE_URL) return { url: config.DATABASE_URL, embedded: null };
  // Loaded only when needed: the package installs process exit hooks of its own.
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { startEmbeddedPostgres } = require('./embedded-postgres') as typeof import('./embedded-postgres');
  const embedded = await startEmbeddedPostgres(config.DATA_DIR, config.EMBEDDED_PG_PORT, logger);
  return { url: embedded.url, embedded };
}

/**
 * REDIS_URL, or a local Redis that is started if nothing answers. With REDIS_CLUSTER_NODES the
 * connections go to the cluster, and the URL only lends them its credentials and TLS.
 */
export async function resolveRedisUrl(config: Config, logger: Logger): Promise<string> {
  if (config.REDIS_URL) return config.REDIS_URL;
  if (config.REDIS_CLUSTER_NODES.length) return `redis://${config.REDIS_CLUSTER_NODES[0]}`;
  await ensureLocalRedis(DEFAULT_REDIS_URL, config.REDIS_AUTOSTART, logger);
  return DEFAULT_REDIS_URL;
}
