import type { Knex } from 'knex';
import type { Redis } from 'ioredis';
import type { Config } from '../shared/config';
import type { Logger } from '../shared/logger';
import type { TokenVerifier } from '../shared/auth/verifier';
import type { DevIssuer } from '../shared/auth/dev-issuer';
import type { AssetStore } from '../shared/assets/asset-store';
import type { WorkspaceCache } from '../shared/workspaces/workspace-store';
import type { StaffCache } from '../shared/staff/staff-cache';
import type { QueueProducers } from '../shared/queues/producers';
import type { ExtractionClient } from '../shared/personas/extraction-client';
import type { Payments } from '../shared/billing/payments';
import type { AgentEndpoint } from './mcp/setup';

/** Everything the API's routes need, built once by the composition root and passed in. */
export interface ApiDeps {
  config: Config;
  db: Knex;
  redis: Redis;
  redisPrefix: string;
  logger: Logger;
  verifier: TokenVerifier;
  workspaces: WorkspaceCache;
  /** Staff lookups, dropped whenever a request's rate-limit round trip reports a staff change. */
  staff: StaffCache;
  assets: AssetStore;
  devIssuer?: DevIssuer;
  /** Queue producers: the outbox relay after a commit, and the queue dashboard. */
  producers: QueueProducers;
  extractions: ExtractionClient;
  payments: Payments;
  /** Where people reach this service; set from PUBLIC_BASE_URL or, failing that, where it listens. */
  urls: { base: string };
  /** The hosted agent endpoint (/mcp), when an authorization server is configured or embedded. */
  agentEndpoint: AgentEndpoint | null;
  runtime: { authMode: 'jwks' | 'development-issuer'; database: 'external' | 'embedded' };
}
