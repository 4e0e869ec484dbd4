/** `npm run migrate`: applies pending migrations to DATABASE_URL (or the embedded database). */
import { createLogger } from '../shared/logger';
import { createDb, dbOptionsOf } from '../shared/db/knex';
import { resolveDatabase } from '../shared/runtime/infrastructure';
import { configOrExit, prepareDatabase } from './boot';

async function main() {
  const config = configOrExit();
  const logger = createLogger(config.LOG_LEVEL);
  const database = await resolveDatabase(config, logger);
  // A migration may rewrite a large table: no statement timeout here, but still the lock timeout.
  const db = createDb(database.url, { ...dbOptionsOf(config), statementTimeoutMs: 0 }, logger);
  try {
    const applied = await prepareDatabase(db, config);
    process.stdout.write(applied.length ? `applied: ${applied.join(', ')}\n` : 'already up to date\n');
  } finally {
    await db.destroy();
    await database.embedded?.stop();
  }
}

main().catch((err) => {
  process.stderr.write(`migration failed: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
