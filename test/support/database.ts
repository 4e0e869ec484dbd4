import { randomBytes } from 'node:crypto';
import { Client } from 'pg';
import { createDb, type Knex } from '../../shared/db/knex';
import { ADMIN_DATABASE_URL, databaseUrl, templateDatabase, testDatabasePrefix } from './env';

export interface TestDatabase {
  name: string;
  url: string;
  db: Knex;
  drop(): Promise<void>;
}

async function admin<T>(fn: (c: Client) => Promise<T>): Promise<T> {
  const c = new Client({ connectionString: ADMIN_DATABASE_URL });
  await c.connect();
  try {
    return await fn(c);
  } finally {
    await c.end();
  }
}

/** A fresh database for one test file, cloned from the migrated template. */
export async function createTestDatabase(): Promise<TestDatabase> {
  const name = `${testDatabasePrefix()}${randomBytes(6).toString('hex')}`;
  // Cloning needs the template to be idle; files starting together may briefly collide.
  for (let attempt = 0; ; attempt++) {
    try {
      await admin(async (c) => {
        await c.query(`create database ${name} template ${templateDatabase()}`);
        // A test database is thrown away after its file: a commit need not wait for the disk
        // (it is as visible to every other connection as ever; only a crash of the server could lose it).
        await c.query(`alter database ${name} set synchronous_commit = off`);
      });
      break;
    } catch (err) {
      if (attempt > 20 || !String(err).includes('being accessed by other users')) throw err;
      await new Promise((r) => setTimeout(r, 100 + Math.random() * 200));
    }
  }
  const url = databaseUrl(name);
  const db = createDb(url, { max: 10 });
  return {
    name,
    url,
    db,
    async drop() {
      await db.destroy();
      // Dropping a database forces a checkpoint of the whole server, which stalls every other file
      // running then: the run's databases are dropped together at its end (global-teardown.ts).
      if (!process.env.FD_TEST_RUN) await admin((c) => c.query(`drop database if exists ${name} with (force)`));
    },
  };
}
