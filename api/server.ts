import { adcpConnections, closeSellerConnections } from '../shared/adapters/adcp/connection';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Knex } from 'knex';
import type { RedisClient } from '../shared/redis';
import { assetDirOf, type Config } from '../shared/config/config';
import type { Logger } from '../shared/logger';
import { AssetStore } from '../shared/assets/asset-store';
import { WorkspaceCache } from '../shared/workspaces/workspace-store';
import { StaffCache } from '../shared/staff/staff-cache';
import { createApiRedis, redisTarget } from '../shared/redis';
import { QueueProducers } from '../shared/queues/producers';
import { ExtractionClient } from '../shared/personas/extraction-client';
import { PERSONA_EXTRACT_QUEUE } from '../shared/queues/names';
import type { ResolvedAuth } from '../shared/auth/resolve-auth';
import type { ApiDeps } from './deps';
import { createPayments, recordBillingTerms } from '../shared/billing/payments';
import { apiListener } from './app';
import { answerClientErrors } from './http/client-errors';
import { createAgentEndpoint } from './mcp/setup';

export interface ApiInputs {
  config: Config;
  logger: Logger;
  db: Knex;
  redisUrl: string;
  auth: ResolvedAuth;
  database: 'external' | 'embedded';
}

// Ops reads of every queue's counts may take longer than a request's 2 s command timeout on a busy Redis.
const QUEUE_READ_TIMEOUT_MS = 10_000;

/** The API's composition root: everything is built here and passed down, nothing is a module singleton. */
export async function createApiDeps(inputs: ApiInputs): Promise<ApiDeps> {
  const { config, logger, db, auth } = inputs;
  const target = redisTarget(inputs.redisUrl, config.REDIS_CLUSTER_NODES);
  const redis: RedisClient = createApiRedis(target);
  redis.on('error', (err) => logger.warn({ err: { message: err.message } }, 'redis connection error'));
  await redis.connect().catch((err: Error) => logger.error({ err: { message: err.message } }, 'redis is not reachable yet'));
  // Producers get their own connection so queue traffic never waits behind rate-limit calls.
  const queueRedis = createApiRedis(target);
  queueRedis.on('error', (err) => logger.warn({ err: { message: err.message } }, 'queue redis connection error'));
  await queueRedis.connect().catch(() => undefined);
  const producers = new QueueProducers(queueRedis, config.REDIS_PREFIX);
  const readsRedis = createApiRedis(target, { commandTimeout: QUEUE_READ_TIMEOUT_MS });
  readsRedis.on('error', (err) => logger.warn({ err: { message: err.message } }, 'queue reads redis connection error'));
  await readsRedis.connect().catch(() => undefined);
  const queueReads = new QueueProducers(readsRedis, config.REDIS_PREFIX);
  const urls = { base: config.PUBLIC_BASE_URL ?? `http://localhost:${config.PORT}` };
  await recordBillingTerms(db, config, logger);
  const workspaces = new WorkspaceCache(db);
  const staff = new StaffCache(db);
  // Created once here, so that readiness only has to look at it.
  const assetDir = assetDirOf(config);
  await fs.promises
    .mkdir(assetDir, { recursive: true })
    .catch((err: Error) => logger.warn({ err: { message: err.message } }, 'asset storage folder could not be created'));
  return {
    config,
    db,
    redis,
    redisPrefix: config.REDIS_PREFIX,
    logger,
    verifier: auth.verifier,
    workspaces,
    staff,
    assets: new AssetStore(db, assetDir),
    producers,
    queueReads,
    extractions: new ExtractionClient(
      () => producers.get(PERSONA_EXTRACT_QUEUE),
      target,
      config.REDIS_PREFIX,
      config.PERSONA_EXTRACT_TIMEOUT_MS,
    ),
    payments: createPayments(db, config, logger, () => urls.base),
    urls,
    sellers: adcpConnections(config.ADCP_SELLERS, { capabilitiesTtlMs: config.ADCP_CAPABILITIES_TTL_MS, logger }),
    agentEndpoint: await createAgentEndpoint({ config, logger, db, auth, workspaces, staff }),
    ...(auth.devIssuer ? { devIssuer: auth.devIssuer } : {}),
    runtime: { authMode: auth.mode, database: inputs.database },
  };
}

export interface RunningApi {
  url: string;
  port: number;
  close(): Promise<void>;
}

/**
 * Stops accepting, lets in-flight requests finish, and closes keep-alive connections as soon
 * as they fall idle (a client holding one open would otherwise keep us up for the keep-alive
 * timeout). Whatever is still open after the grace period is cut.
 */
async function stopServing(server: http.Server, graceMs: number): Promise<void> {
  const closed = new Promise<void>((resolve) => server.close(() => resolve()));
  server.closeIdleConnections();
  const sweep = setInterval(() => server.closeIdleConnections(), 100);
  const cut = setTimeout(() => server.closeAllConnections(), graceMs);
  try {
    await closed;
  } finally {
    clearInterval(sweep);
    clearTimeout(cut);
  }
}

export async function startApi(deps: ApiDeps, port = deps.config.PORT, host = deps.config.HOST): Promise<RunningApi> {
  const server = http.createServer(apiListener(deps));
  answerClientErrors(server);
  // Behind a load balancer, keep idle sockets open longer than it does.
  server.keepAliveTimeout = 65_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, resolve);
  });
  const actual = (server.address() as AddressInfo).port;
  const shownHost = host === '0.0.0.0' || host === '::' ? 'localhost' : host;
  if (!deps.config.PUBLIC_BASE_URL) deps.urls.base = `http://${shownHost}:${actual}`;
  return {
    url: `http://${shownHost}:${actual}`,
    port: actual,
    async close() {
      await stopServing(server, deps.config.SHUTDOWN_GRACE_MS);
      await deps.extractions.close();
      await closeSellerConnections(deps.sellers.values());
      await deps.producers.close().catch(() => undefined);
      deps.producers.connection.disconnect();
      await deps.queueReads.close().catch(() => undefined);
      deps.queueReads.connection.disconnect();
      deps.redis.disconnect();
    },
  };
}
