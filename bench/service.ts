import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client } from 'pg';
import { ConfigSchema } from '../shared/config/config';
import { createLogger } from '../shared/logger';
import { createDb, type Knex } from '../shared/db/knex';
import { migrateLatest } from '../shared/db/migrations';
import { resolveAuth } from '../shared/auth/resolve-auth';
import { createApiDeps, startApi } from '../api/server';
import { startWorkers } from '../workers/main';
import { ADMIN_URL, RATE_LIMITS_LIFTED, REDIS_URL } from './service-process';
import { deleteKeys, madeByBench } from './leftovers';

export interface BenchService {
  url: string;
  token: string;
  pixelKey: string;
  db: Knex;
  dbUrl: string;
  redisUrl: string;
  prefix: string;
  close(): Promise<void>;
}

/** The real service (API and workers) on a throwaway database and Redis prefix, rate limits lifted. */
export async function startBenchService(): Promise<BenchService> {
  const dbName = `fdbench_${randomBytes(4).toString('hex')}`;
  const admin = new Client({ connectionString: ADMIN_URL });
  await admin.connect();
  const madeDb = madeByBench('database', dbName);
  await admin.query(`create database ${dbName}`);
  await admin.end();
  const dbUrl = new URL(ADMIN_URL);
  dbUrl.pathname = `/${dbName}`;

  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'flightdeck-bench-'));
  const prefix = `fdbench:${randomBytes(4).toString('hex')}`;
  const made = [madeDb, madeByBench('dir', dataDir), madeByBench('prefix', prefix)];
  const config = ConfigSchema.parse({
    NODE_ENV: 'test',
    PORT: '0',
    HOST: '127.0.0.1',
    DATABASE_URL: dbUrl.toString(),
    REDIS_URL,
    REDIS_PREFIX: prefix,
    LOG_LEVEL: 'silent',
    DATA_DIR: dataDir,
    ...RATE_LIMITS_LIFTED,
  });
  const logger = createLogger('silent');
  const db = createDb(config.DATABASE_URL!, { max: 20 });
  await migrateLatest(db);
  const auth = await resolveAuth(config);
  const deps = await createApiDeps({ config, logger, db, redisUrl: REDIS_URL, auth, database: 'external' });
  const api = await startApi(deps);
  const workers = await startWorkers({ config, logger, db, redisUrl: REDIS_URL });
  const token = await auth.devIssuer!.sign({
    org: 'bench-org',
    user: 'bench-user',
    permissions: ['agent:approve', 'plan:approve', 'campaign:launch'],
  });
  const ctx = (await (await fetch(`${api.url}/api/v1/auth/context`, { headers: { authorization: `Bearer ${token}` } })).json()) as {
    workspace: { pixelKey: string };
  };

  return {
    url: api.url,
    token,
    pixelKey: ctx.workspace.pixelKey,
    db,
    dbUrl: config.DATABASE_URL!,
    redisUrl: REDIS_URL,
    prefix,
    async close() {
      await api.close();
      await workers.close();
      await db.destroy();
      const c = new Client({ connectionString: ADMIN_URL });
      await c.connect();
      await c.query(`drop database if exists ${dbName} with (force)`);
      await c.end();
      fs.rmSync(dataDir, { recursive: true, force: true });
      // Keys go once the workers are closed, or their last writes would outlive the run.
      await deleteKeys(REDIS_URL, prefix);
      for (const done of made) done();
    },
  };
}
