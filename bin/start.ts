/**
 * `npm start`: the API and the workers, on embedded defaults when DATABASE_URL, REDIS_URL or
 * AUTH_JWKS_URL are not set. With API_PROCESSES > 1 the API runs as that many processes behind
 * the one port, and this process keeps the workers.
 */
import cluster from 'node:cluster';
import { startWorkers } from '../workers/main';
import { forkApiProcesses } from './api-cluster';
import { runForkedApiProcess, serveApi } from './api-process';
import { bootInfrastructure, onShutdown, prepareDatabase, runMain } from './boot';

runMain('Flightdeck', async () => {
  if (cluster.isWorker) return runForkedApiProcess();
  const infra = await bootInfrastructure();
  const { config, logger, database, db, redisUrl } = infra;
  const applied = await prepareDatabase(db, config);
  if (applied.length) logger.info({ applied }, 'migrations applied');

  let url: string;
  let closeApi: () => Promise<void>;
  let banner: string[];
  if (config.API_PROCESSES > 1) {
    const processes = forkApiProcesses(config.API_PROCESSES, { DATABASE_URL: database.url, REDIS_URL: redisUrl }, logger);
    closeApi = () => processes.stop();
    url = await processes.listening.catch(async (err: Error) => {
      await processes.stop();
      throw err;
    });
    banner = [`  processes:  ${config.API_PROCESSES} API processes behind one port`];
  } else {
    const { api, deps } = await serveApi(infra);
    closeApi = () => api.close();
    url = api.url;
    banner = [`  console:    ${deps.urls.base}/console (staff, operators and approvers; see docs/console.md)`];
    if (deps.agentEndpoint) {
      banner.push(`  agents:     ${deps.agentEndpoint.resourceUrl} (MCP, OAuth via ${deps.agentEndpoint.issuer}; see docs/mcp.md)`);
    }
  }
  const workers = await startWorkers({ config, logger, db, redisUrl });

  // Loopback by name: the agent endpoint's resource URL (and the MCP SDK's checks of it) say localhost.
  const shown = url.replace('://127.0.0.1', '://localhost');
  const lines = [
    '',
    `Flightdeck is listening on ${shown}`,
    `  readiness:  ${shown}/readyz`,
    `  OpenAPI:    ${shown}/api/v1/openapi.json`,
    `  database:   ${database.embedded ? 'embedded PostgreSQL (.data/postgres)' : 'DATABASE_URL'}`,
    `  workers:    ${workers.queues.length} queues (supplier.<adapter> and maintenance)`,
    `  queues UI:  ${shown}/admin/queues?access_token=<token> (needs the ops role: npm run admin -- ops grant <user>)`,
    ...banner,
  ];
  if (!config.AUTH_JWKS_URL) {
    lines.push(
      '  auth:       development issuer (not for production)',
      '',
      'Get a token and call the API:',
      '  TOKEN=$(npm run -s token -- --org acme --user alice --perm plan:approve --perm campaign:launch --perm agent:approve)',
      `  curl -H "Authorization: Bearer $TOKEN" ${shown}/api/v1/auth/context`,
    );
  }
  process.stdout.write(`${lines.join('\n')}\n\n`);

  onShutdown(
    async () => {
      await closeApi();
      await workers.close();
      await db.destroy();
      await database.embedded?.stop();
    },
    (m) => logger.info(m),
  );
});
