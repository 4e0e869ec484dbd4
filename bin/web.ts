/** The `web` process: the API alone. Migrations run in the release step (`npm run migrate`). */
import { resolveAuth } from '../shared/runtime/infrastructure';
import { createApiDeps, startApi } from '../api/server';
import { bootInfrastructure, onShutdown, runMain } from './boot';

runMain('web', async () => {
  const { config, logger, database, db, redisUrl } = await bootInfrastructure();
  const deps = await createApiDeps({
    config,
    logger,
    db,
    redisUrl,
    auth: await resolveAuth(config),
    database: database.embedded ? 'embedded' : 'external',
  });
  const api = await startApi(deps);
  logger.info({ url: api.url }, 'api listening');
  onShutdown(
    async () => {
      await api.close();
      await db.destroy();
      await database.embedded?.stop();
    },
    (m) => logger.info(m),
  );
});
