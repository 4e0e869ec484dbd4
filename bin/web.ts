/**
 * The `web` process: the API alone, as one process or as API_PROCESSES processes behind one
 * port. Migrations run in the release step (`npm run migrate`).
 */
import cluster from 'node:cluster';
import { forkApiProcesses } from './api-cluster';
import { runForkedApiProcess, serveApi } from './api-process';
import { bootInfrastructure, onShutdown, runMain } from './boot';

runMain('web', async () => {
  if (cluster.isWorker) return runForkedApiProcess();
  const infra = await bootInfrastructure();
  const { config, logger, database, db, redisUrl } = infra;
  if (config.API_PROCESSES > 1) {
    const processes = forkApiProcesses(config.API_PROCESSES, { DATABASE_URL: database.url, REDIS_URL: redisUrl }, logger);
    onShutdown(
      async () => {
        await processes.stop();
        await db.destroy();
        await database.embedded?.stop();
      },
      (m) => logger.info(m),
    );
    logger.info({ url: await processes.listening, processes: config.API_PROCESSES }, 'api processes listening');
    return;
  }
  const { api } = await serveApi(infra);
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
