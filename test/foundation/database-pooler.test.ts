import { createTestDatabase, type TestDatabase } from '../support/database';
import { createDb, missingRoleTimeouts, type Knex } from '../../shared/db/knex';

/**
 * Behind a transaction-mode pooler (PgBouncer) a client's connection settings do not follow it
 * from one server connection to the next, and startup parameters PgBouncer does not track are
 * refused. So with DB_POOLER=transaction the timeouts are not connection settings; they must be
 * the database role's (or database's) defaults, and the service says when they are not.
 */
let database: TestDatabase;
const opened: Knex[] = [];
const open = (pooler: 'none' | 'transaction') => {
  const db = createDb(database.url, { statementTimeoutMs: 1234, lockTimeoutMs: 567, pooler });
  opened.push(db);
  return db;
};
const settings = async (db: Knex) => {
  const { rows } = await db.raw(`select current_setting('statement_timeout') as s, current_setting('lock_timeout') as l`);
  return [rows[0].s, rows[0].l];
};

beforeAll(async () => {
  database = await createTestDatabase();
});
afterAll(async () => {
  await Promise.all(opened.map((db) => db.destroy()));
  await database.drop();
});

describe('PostgreSQL behind a transaction-mode pooler', () => {
  test('connections carry no timeouts of their own, and the missing role defaults are named with the statements that set them', async () => {
    const db = open('transaction');
    expect(await settings(db)).toEqual(['0', '0']);
    const missing = await missingRoleTimeouts(db, { statementTimeoutMs: 1234, lockTimeoutMs: 567 });
    const role = new URL(database.url).username;
    expect(missing).toEqual([`ALTER ROLE "${role}" SET statement_timeout = '1234ms'`, `ALTER ROLE "${role}" SET lock_timeout = '567ms'`]);
  });

  test('with the defaults set on the server side, nothing is missing', async () => {
    const name = new URL(database.url).pathname.slice(1);
    const admin = open('none');
    await admin.raw(`alter database ?? set statement_timeout = '1s'`, [name]);
    await admin.raw(`alter database ?? set lock_timeout = '500ms'`, [name]);
    const db = open('transaction');
    expect(await settings(db)).toEqual(['1s', '500ms']);
    expect(await missingRoleTimeouts(db, { statementTimeoutMs: 1234, lockTimeoutMs: 567 })).toEqual([]);
  });

  test('without a pooler the timeouts stay connection settings, as before', async () => {
    expect(await settings(open('none'))).toEqual(['1234ms', '567ms']);
  });
});
