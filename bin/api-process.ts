import { resolveAuth, type ResolvedAuth } from '../shared/auth/resolve-auth';
import { createApiDeps, startApi, type RunningApi } from '../api/server';
import type { ApiDeps } from '../api/deps';
import { announceListening } from './api-cluster';
import { bootInfrastructure, onShutdown, type Infrastructure } from './boot';

/** The API on this process's infrastructure, listening on PORT. */
export async function serveApi(infra: Infrastructure): Promise<{ api: RunningApi; deps: ApiDeps; auth: ResolvedAuth }> {
  const { config, logger, database, db, redisUrl } = infra;
  const auth = await resolveAuth(config);
  const deps = await createApiDeps({ config, logger, db, redisUrl, auth, database: database.embedded ? 'embedded' : 'external' });
  return { api: await startApi(deps), deps, auth };
}

/**
 * One of several API processes forked by `npm start` or `npm run start:web` (API_PROCESSES > 1):
 * it gets DATABASE_URL and REDIS_URL from its primary and serves until told to stop.
 */
export async function runForkedApiProcess(): Promise<void> {
  const infra = await bootInfrastructure();
  const { api } = await serveApi(infra);
  infra.logger.info({ url: api.url }, 'api listening');
  announceListening(api.url);
  onShutdown(
    async () => {
      await api.close();
      await infra.db.destroy();
    },
    (m) => infra.logger.info(m),
  );
}
