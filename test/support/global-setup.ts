import { randomBytes } from 'node:crypto';
import { Client } from 'pg';
import { createDb } from '../../shared/db/knex';
import { migrateLatest } from '../../shared/db/migrations';
import { ADMIN_DATABASE_URL, databaseUrl, templateDatabase } from './env';

/** Builds the migrated template once per run; each test file clones it (fast) into its own database. */
export default async function globalSetup(): Promise<void> {
  // Inherited by the test workers, which start after this.
  process.env.FD_TEST_RUN = randomBytes(4).toString('hex');
  const admin = new Client({ connectionString: ADMIN_DATABASE_URL });
  await admin.connect();
  try {
    await admin.query(`create database ${templateDatabase()}`);
  } finally {
    await admin.end();
  }
  const db = createDb(databaseUrl(templateDatabase()), { max: 1 });
  try {
    await migrateLatest(db);
  } finally {
    await db.destroy();
  }
}
