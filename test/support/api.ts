import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { Writable } from 'node:stream';
import { Redis } from 'ioredis';
import { ConfigSchema, type Config } from '../../shared/config/config';
import { createLogger, type Logger } from '../../shared/logger';
import { jwksVerifier } from '../../shared/auth/resolve-auth';
import type { Knex } from '../../shared/db/knex';
import { createApiDeps, startApi, type RunningApi } from '../../api/server';
import { apiRoutes } from '../../api/app';
import { buildOpenApiDocument } from '../../api/http/openapi';
import type { ApiDeps } from '../../api/deps';
import type { ResolvedAuth } from '../../shared/auth/resolve-auth';
import { startWorkers, type RunningWorkers } from '../../workers/main';
import { staffWriter, type StaffWriter } from '../../shared/staff/staff-version';
import { createTestDatabase, type TestDatabase } from './database';
import { TEST_REDIS_URL } from './env';
import { TEST_AUDIENCE, TEST_ISSUER, TestIssuer } from './issuer';
import { ResponseChecker, type OpenApiDoc } from './openapi-check';
import { cleanEnv } from './processes';
import { deleteKeysUnder } from './redis-keys';

export interface TestEnv {
  database: TestDatabase;
  db: Knex;
  prefix: string;
  issuer: TestIssuer;
  dataDir: string;
  redis: Redis;
  /** Staff changes on this file's database, announced on its Redis prefix as bin/admin.ts does. */
  staff: StaffWriter;
  config(overrides?: Record<string, string>): Config;
  /** The environment for a service process (bin/*.ts) on this file's database, prefix, data folder and issuer. */
  processEnv(overrides?: Record<string, string>): NodeJS.ProcessEnv;
  /** Starts an API on port 0 against this file's database and prefix. */
  api(overrides?: Record<string, string>, extra?: { db?: Knex; redisUrl?: string; auth?: ResolvedAuth }): Promise<TestApi>;
  workers(overrides?: Record<string, string>): Promise<RunningWorkers>;
  close(): Promise<void>;
}

export interface TestApi {
  url: string;
  deps: ApiDeps;
  logs: Array<Record<string, unknown>>;
  rawLogs: string[];
  /**
   * Calls the API. Every response to a documented operation is checked against the OpenAPI
   * document (status, headers, body); one that disagrees fails the calling test.
   */
  fetch(path: string, init?: RequestInit & { token?: string }): Promise<Response>;
  close(): Promise<void>;
}

/** What request helpers need of an API: a service in another process can be one too. */
export type ApiClient = Pick<TestApi, 'fetch'>;

/** A client for a service running elsewhere (its own process), at `url`. */
export function remoteApi(url: string): ApiClient {
  return {
    fetch(p, init = {}) {
      const { token, ...rest } = init;
      const headers = new Headers(rest.headers);
      if (token) headers.set('authorization', `Bearer ${token}`);
      return fetch(`${url}${p}`, { ...rest, headers });
    },
  };
}

/** A log sink that keeps every line, so tests can assert on what was (and was not) logged. */
export function captureLogs(level: string): { logger: Logger; lines: string[] } {
  const lines: string[] = [];
  const sink = new Writable({
    write(chunk, _enc, cb) {
      lines.push(String(chunk));
      cb();
    },
  });
  return { logger: createLogger(level, sink), lines };
}

/**
 * One test file's world: its own database, Redis prefix, data folder and identity provider.
 * The general rate limit is relaxed unless a file asks for the product's defaults, so that
 * polling on a slow machine never trips it; the rate-limit tests set their own limits.
 */
export async function createTestEnv(opts: { rateLimits?: 'default' | 'relaxed' } = {}): Promise<TestEnv> {
  const database = await createTestDatabase();
  const prefix = `fdt:${randomBytes(5).toString('hex')}`;
  const issuer = await TestIssuer.start();
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'flightdeck-test-'));
  const redis = new Redis(TEST_REDIS_URL, { maxRetriesPerRequest: 1 });
  const apis: TestApi[] = [];
  const workerSets: RunningWorkers[] = [];

  const config = (overrides: Record<string, string> = {}) =>
    ConfigSchema.parse({
      NODE_ENV: 'test',
      PORT: '0',
      HOST: '127.0.0.1',
      DATABASE_URL: database.url,
      REDIS_URL: TEST_REDIS_URL,
      REDIS_PREFIX: prefix,
      AUTH_ISSUER: TEST_ISSUER,
      AUTH_AUDIENCE: TEST_AUDIENCE,
      AUTH_JWKS_URL: issuer.url,
      AUTH_JWKS_COOLDOWN_MS: '0',
      LOG_LEVEL: 'info',
      DATA_DIR: dataDir,
      HEARTBEAT_TTL_MS: '3000',
      ...(opts.rateLimits === 'default' ? {} : { RATE_LIMIT_MAX: '100000' }),
      ...overrides,
    });

  const env: TestEnv = {
    database,
    db: database.db,
    prefix,
    issuer,
    dataDir,
    redis,
    staff: staffWriter(database.db, redis, prefix),
    config,
    processEnv: (overrides = {}) =>
      cleanEnv({
        DATABASE_URL: database.url,
        REDIS_URL: TEST_REDIS_URL,
        REDIS_PREFIX: prefix,
        DATA_DIR: dataDir,
        AUTH_ISSUER: TEST_ISSUER,
        AUTH_AUDIENCE: TEST_AUDIENCE,
        AUTH_JWKS_URL: issuer.url,
        ...overrides,
      }),
    async api(overrides = {}, extra = {}) {
      const cfg = config(overrides);
      const { logger, lines } = captureLogs(cfg.LOG_LEVEL);
      const deps = await createApiDeps({
        config: cfg,
        logger,
        db: extra.db ?? database.db,
        redisUrl: extra.redisUrl ?? cfg.REDIS_URL!,
        auth: extra.auth ?? {
          verifier: jwksVerifier(cfg, cfg.AUTH_JWKS_URL!, cfg.AUTH_ISSUER!),
          devIssuer: null,
          mode: 'jwks',
        },
        database: 'external',
      });
      const running: RunningApi = await startApi(deps);
      const checker = new ResponseChecker(
        buildOpenApiDocument(apiRoutes(deps), { defaultBodyLimitBytes: cfg.BODY_LIMIT_BYTES }) as unknown as OpenApiDoc,
      );
      const api: TestApi = {
        url: running.url,
        deps,
        rawLogs: lines,
        get logs() {
          return lines.map((l) => JSON.parse(l) as Record<string, unknown>);
        },
        async fetch(p, init = {}) {
          const res = await remoteApi(running.url).fetch(p, init);
          await checker.check(init.method ?? 'GET', p, res);
          return res;
        },
        close: () => running.close(),
      };
      apis.push(api);
      return api;
    },
    async workers(overrides = {}) {
      const cfg = config(overrides);
      // Silent unless the caller asks for a level (the browser world keeps warnings, to diagnose a failed spec).
      const level = overrides.LOG_LEVEL ?? 'silent';
      const w = await startWorkers({ config: cfg, logger: createLogger(level as never), db: database.db, redisUrl: cfg.REDIS_URL! });
      workerSets.push(w);
      return w;
    },
    async close() {
      await Promise.all(apis.map((a) => a.close().catch(() => undefined)));
      await Promise.all(workerSets.map((w) => w.close().catch(() => undefined)));
      await deleteKeysUnder(prefix, redis);
      redis.disconnect();
      await issuer.close();
      await database.drop();
      fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
  return env;
}

export async function json<T = Record<string, unknown>>(res: Response): Promise<T> {
  return (await res.json()) as T;
}

/** An RFC 9457 problem: the status, the problem+json type, the status repeated in the body and, if given, the code. */
export async function expectProblem(res: Response, status: number, code?: string) {
  expect(res.status).toBe(status);
  expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
  const body = await json<{ code: string; detail: string; status: number }>(res);
  expect(body.status).toBe(status);
  if (code) expect(body.code).toBe(code);
  return body;
}
