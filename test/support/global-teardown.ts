import { Client } from 'pg';
import { ADMIN_DATABASE_URL, templateDatabase, testDatabasePrefix } from './env';

/** Drops this run's template and any test database a crashed file left behind. */
export default async function globalTeardown(): Promise<void> {
  const admin = new Client({ connectionString: ADMIN_DATABASE_URL });
  await admin.connect();
  try {
    const { rows } = await admin.query<{ datname: string }>('select datname from pg_database where starts_with(datname, $1)', [
      testDatabasePrefix(),
    ]);
    for (const r of rows) await admin.query(`drop database if exists "${r.datname}" with (force)`);
    await admin.query(`drop database if exists ${templateDatabase()} with (force)`);
  } finally {
    await admin.end();
  }
}
