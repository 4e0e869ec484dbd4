/**
 * `npm start`: the API and the workers in one process, on embedded defaults when
 * DATABASE_URL, REDIS_URL or AUTH_JWKS_URL are not set.
 */
import { migrateLatest } from '../shared/db/migrations';
import { resolveAuth } from '../shared/runtime/infrastructure';
import { createApiDeps, startApi } from '../api/server';
import { startWorkers } from '../workers/main';
import { bootInfrastructure, onShutdown, runMain } from './boot';

runMain('Flightdeck', async () => {
  const { config, logger, database, db, redisUrl } = await bootInfrastructure();
  const applied = await migrateLatest(db);
  if (applied.length) logger.info({ applied }, 'migrations applied');
  const auth = await resolveAuth(config);

  const deps = await createApiDeps({ config, logger, db, redisUrl, auth, database: database.embedded ? 'embedded' : 'external' });
  const api = await startApi(deps);
  const workers = await startWorkers({ config, logger, db, redisUrl });

  const lines = [
    '',
    `Flightdeck is listening on ${api.url}`,
    `  readiness:  ${api.url}/readyz`,
    `  OpenAPI:    ${api.url}/api/v1/openapi.json`,
    `  database:   ${database.embedded ? 'embedded PostgreSQL (.data/postgres)' : 'DATABASE_URL'}`,
    `  workers:    ${workers.queues.length} queues (supplier.<adapter> and maintenance)`,
    `  queues UI:  ${api.url}/admin/queues?access_token=<staff token>`,
    `  console:    ${deps.urls.base}/console (staff, operators and approvers; see docs/console.md)`,
  ];
  if (deps.agentEndpoint) {
    lines.push(`  agents:     ${deps.agentEndpoint.resourceUrl} (MCP, OAuth via ${deps.agentEndpoint.issuer}; see docs/mcp.md)`);
  }
  if (auth.devIssuer) {
    lines.push(
      '  auth:       development issuer (not for production)',
      '',
      'Get a token and call the API:',
      '  TOKEN=$(npm run -s token -- --org acme --user alice --perm agent:approve)',
      `  curl -H "Authorization: Bearer $TOKEN" ${api.url}/api/v1/auth/context`,
    );
  }
  process.stdout.write(`${lines.join('\n')}\n\n`);

  onShutdown(
    async () => {
      await api.close();
      await workers.close();
      await db.destroy();
      await database.embedded?.stop();
    },
    (m) => logger.info(m),
  );
});
