import type { AdcpSellerConnection } from '../shared/adapters/adcp/connection';
import type { Knex } from 'knex';
import type { RedisClient } from '../shared/redis';
import type { Config } from '../shared/config/config';
import type { Logger } from '../shared/logger';
import type { TokenVerifier } from '../shared/auth/verifier';
import type { DevIssuer } from '../shared/auth/dev-issuer';
import type { AssetStore } from '../shared/assets/asset-store';
import type { WorkspaceCache } from '../shared/workspaces/workspace-store';
import type { StaffCache } from '../shared/staff/staff-cache';
import type { QueueProducers } from '../shared/queues/producers';
import type { ExtractionClient } from '../shared/personas/extraction-client';
import type { Payments } from '../shared/billing/payments';
import type { Provider } from 'oidc-provider';
import type { AuthorizationServer } from '../shared/mcp/authorization-server';
import type { McpGrantVerifier } from '../shared/mcp/grant';
import type { AgentCredentials } from '../shared/mcp/agent-credentials';
import type { ToolListCache } from '../shared/mcp/tool-list-cache';

/** Everything the API's routes need, built once by the composition root and passed in. */
export interface ApiDeps {
  config: Config;
  db: Knex;
  redis: RedisClient;
  redisPrefix: string;
  logger: Logger;
  verifier: TokenVerifier;
  workspaces: WorkspaceCache;
  /** Staff lookups, dropped whenever a request's rate-limit round trip reports a staff change. */
  staff: StaffCache;
  assets: AssetStore;
  devIssuer?: DevIssuer;
  /** Queue producers: the outbox relay after a commit. */
  producers: QueueProducers;
  /**
   * The same queues for ops reads (bull-board, the console's counts): a read walks every queue,
   * so it gets its own connection and longer to answer than a request's fail-fast commands.
   */
  queueReads: QueueProducers;
  extractions: ExtractionClient;
  payments: Payments;
  /** Where people reach this service; set from PUBLIC_BASE_URL or, failing that, where it listens. */
  urls: { base: string };
  /** The deployment's AdCP sellers, by adapter key. */
  sellers: ReadonlyMap<string, AdcpSellerConnection>;
  /** The hosted agent endpoint (/mcp), when an authorization server is configured or embedded. */
  agentEndpoint: AgentEndpoint | null;
  runtime: { authMode: 'jwks' | 'development-issuer'; database: 'external' | 'embedded' };
}

/** The hosted agent endpoint (/mcp), as the composition root builds it (api/mcp/setup.ts). */
export interface AgentEndpoint {
  resourceUrl: string;
  metadataUrl: string;
  scope: string;
  issuer: string;
  authorizationServer: AuthorizationServer;
  verifyGrant: McpGrantVerifier;
  credentials: AgentCredentials;
  /** The embedded development authorization server, when no MCP_ISSUER is configured. */
  devServer: Provider | null;
  /** The console's client at the embedded server, when the console signs in there. */
  devConsoleClientId: string | null;
  /** tools/list, answered from one list per process. */
  toolList: ToolListCache;
}
