import { ConfigError, loadConfig, type Config } from '../shared/config/config';
import { createLogger, type Logger } from '../shared/logger';
import { workerQueuesOf } from '../shared/queues/names';
import { createDb, dbOptionsOf, missingRoleTimeouts, type Knex } from '../shared/db/knex';
import { resolveDatabase, resolveRedisUrl, type ResolvedDatabase } from '../shared/runtime/infrastructure';
import { migrateLatest } from '../shared/db/migrations';
import { secretBoxOf } from '../shared/crypto/secret-box';
import { sealIssuedWebhookSecrets } from '../shared/adapters/adcp/webhook-auth';
import { sealStoredSecrets } from '../shared/webhooks/subscription-store';

/** Loads configuration or stops the process with a message naming the bad variable. */
export function configOrExit(): Config {
  try {
    const config = loadConfig();
    // Checked here too, so that a bad WORKER_QUEUES stops every process before it starts anything.
    workerQueuesOf(config.WORKER_QUEUES);
    return config;
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`${err.message}\n`);
      process.exit(78); // EX_CONFIG
    }
    throw err;
  }
}

/** However shutdown goes, the process is gone within this long of the signal (orchestrators kill at 10 s or later). */
const SHUTDOWN_DEADLINE_MS = 9_500;

/** Runs the closers once on SIGINT/SIGTERM, then exits. */
export function onShutdown(close: () => Promise<void>, log: (msg: string) => void): void {
  let closing = false;
  const handler = (signal: string) => {
    if (closing) return;
    closing = true;
    log(`${signal} received: finishing in-flight work and shutting down`);
    setTimeout(() => {
      process.stderr.write(`shutdown did not finish within ${SHUTDOWN_DEADLINE_MS} ms; exiting\n`);
      process.exit(1);
    }, SHUTDOWN_DEADLINE_MS).unref();
    close()
      .then(() => process.exit(0))
      .catch((err) => {
        process.stderr.write(`shutdown failed: ${String(err)}\n`);
        process.exit(1);
      });
  };
  // We own graceful shutdown (it stops the embedded database too); a dependency's own
  // signal hooks would otherwise exit mid-way with 128+signal.
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.removeAllListeners(signal);
    process.on(signal, () => handler(signal));
  }
}

export interface Infrastructure {
  config: Config;
  logger: Logger;
  database: ResolvedDatabase;
  db: Knex;
  redisUrl: string;
}

/** Configuration, logger, database (external or embedded) and Redis: what every process starts from. */
export async function bootInfrastructure(): Promise<Infrastructure> {
  const config = configOrExit();
  const logger = createLogger(config.LOG_LEVEL);
  const database = await resolveDatabase(config, logger);
  const redisUrl = await resolveRedisUrl(config, logger);
  const db = createDb(database.url, dbOptionsOf(config), logger);
  if (config.DB_POOLER === 'transaction') warnOfMissingRoleTimeouts(db, config, logger);
  return { config, logger, database, db, redisUrl };
}

/** The database bounds are the role's defaults behind a pooler; an operator who forgot them hears of it. */
function warnOfMissingRoleTimeouts(db: Knex, config: Config, logger: Logger): void {
  missingRoleTimeouts(db, dbOptionsOf(config))
    .then((missing) => {
      if (missing.length)
        logger.warn({ run: missing }, 'database role lacks the configured timeouts (DB_POOLER=transaction); run these once');
    })
    .catch((err: Error) => logger.warn({ err: { message: err.message } }, 'could not read the database role timeouts'));
}

/** Failing to start is one line on stderr and a non-zero exit, never a stack dump of secrets. */
export function runMain(what: string, main: () => Promise<void>): void {
  main().catch((err) => {
    if (err instanceof ConfigError) {
      process.stderr.write(`${err.message}\n`);
      process.exit(78);
    }
    process.stderr.write(`${what} failed to start: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exit(1);
  });
}

/** Brings the database up to date: the schema's migrations, then stored secrets sealed under SECRETS_KEY. */
export async function prepareDatabase(db: Knex, config: Pick<Config, 'SECRETS_KEY' | 'SECRETS_KEY_PREVIOUS'>): Promise<string[]> {
  const applied = await migrateLatest(db);
  await sealStoredSecrets(db, secretBoxOf(config));
  await sealIssuedWebhookSecrets(db, secretBoxOf(config));
  return applied;
}
