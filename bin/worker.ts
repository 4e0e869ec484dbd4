/** The `worker` process: every queue, or those named in WORKER_QUEUES. */
import { startWorkers } from '../workers/main';
import { bootInfrastructure, onShutdown, runMain } from './boot';

runMain('worker', async () => {
  const { config, logger, database, db, redisUrl } = await bootInfrastructure();
  const workers = await startWorkers({ config, logger, db, redisUrl });
  onShutdown(
    async () => {
      await workers.close();
      await db.destroy();
      await database.embedded?.stop();
    },
    (m) => logger.info(m),
  );
});
