import { getOAuthProtectedResourceMetadataUrl } from '@modelcontextprotocol/sdk/server/auth/router.js';
import type { Knex } from 'knex';
import type { Provider } from 'oidc-provider';
import { consoleBaseOf, mcpResourceUrlOf, type Config } from '../../shared/config/config';
import type { Logger } from '../../shared/logger';
import { describeCaller } from '../../shared/access/auth-context';
import { AgentCredentials } from '../../shared/mcp/agent-credentials';
import { AuthorizationServer } from '../../shared/mcp/authorization-server';
import { createGrantVerifier } from '../../shared/mcp/grant';
import type { ResolvedAuth } from '../../shared/auth/resolve-auth';
import type { WorkspaceCache } from '../../shared/workspaces/workspace-store';
import type { StaffCache } from '../../shared/staff/staff-cache';
import { loadDevAuthorizationKeys } from '../oauth/dev-keys';
import type { AgentEndpoint } from '../deps';
import { ToolListCache } from '../../shared/mcp/tool-list-cache';

/** Requests to the embedded server, handed to it in process (loaded in development only, like the server). */
function devFetch(devServer: Provider): typeof fetch {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { inProcessFetch } = require('../oauth/in-process-fetch') as typeof import('../oauth/in-process-fetch');
  return inProcessFetch(devServer.callback());
}

/**
 * The configured issuer (MCP_ISSUER), or, in development (the development issuer signs API
 * tokens), the embedded authorization server under /oauth. With neither, there is no agent
 * endpoint: a production API issuer cannot be made to mint API credentials by us.
 */
export async function createAgentEndpoint(i: {
  config: Config;
  logger: Logger;
  db: Knex;
  auth: ResolvedAuth;
  workspaces: WorkspaceCache;
  staff: StaffCache;
}): Promise<AgentEndpoint | null> {
  const { config, auth } = i;
  const resourceUrl = mcpResourceUrlOf(config);
  let issuer: string;
  let secret: string;
  let devServer: Provider | null = null;
  if (config.MCP_ISSUER) {
    issuer = config.MCP_ISSUER;
    secret = config.MCP_EXCHANGE_CLIENT_SECRET!;
  } else if (auth.devIssuer) {
    const keys = await loadDevAuthorizationKeys(config.DATA_DIR);
    issuer = new URL(resourceUrl).origin;
    secret = keys.exchangeClientSecret;
    // Loaded only in development: oidc-provider is never part of a production process.
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const { createDevAuthorizationServer } = require('../oauth/provider') as typeof import('../oauth/provider');
    devServer = createDevAuthorizationServer({
      issuer,
      resourceUrl,
      scope: config.MCP_SCOPE,
      clientId: config.MCP_CLIENT_ID,
      redirectUris: config.MCP_REDIRECT_URIS,
      exchangeClientId: config.MCP_EXCHANGE_CLIENT_ID,
      keys,
      apiIssuer: auth.devIssuer,
      apiTokenTtlSeconds: config.MCP_API_TOKEN_TTL_SECONDS,
      trustProxy: config.TRUST_PROXY !== false,
      db: i.db,
      clientDocuments: {
        enabled: config.MCP_CLIENT_ID_METADATA_DOCUMENTS,
        allowLoopback: config.MCP_CLIENT_DOCUMENT_ALLOW_LOOPBACK,
        logger: i.logger,
      },
      ...(config.CONSOLE_ISSUER
        ? {}
        : { console: { clientId: config.CONSOLE_CLIENT_ID, redirectUri: `${consoleBaseOf(config)}/console/callback` } }),
    });
  } else {
    i.logger.warn('the agent endpoint /mcp is off: set MCP_ISSUER (and MCP_RESOURCE_URL, MCP_EXCHANGE_CLIENT_SECRET) to enable it');
    return null;
  }
  const keyRules = {
    cooldownMs: config.AUTH_JWKS_COOLDOWN_MS,
    cacheMaxAgeMs: config.AUTH_JWKS_CACHE_MAX_AGE_MS,
    maxStaleMs: config.AUTH_JWKS_MAX_STALE_MS,
  };
  // The embedded server is asked in process: over HTTP to ourselves, its calls would spend (and
  // be refused by) the rate limit of the service's own address.
  const authorizationServer = new AuthorizationServer(
    issuer,
    { id: config.MCP_EXCHANGE_CLIENT_ID, secret },
    keyRules,
    devServer ? devFetch(devServer) : fetch,
  );
  return {
    resourceUrl,
    metadataUrl: getOAuthProtectedResourceMetadataUrl(new URL(resourceUrl)),
    scope: config.MCP_SCOPE,
    issuer,
    authorizationServer,
    verifyGrant: createGrantVerifier({
      issuer,
      audience: resourceUrl,
      keys: () => authorizationServer.keys(),
      // As for API tokens: never remembered past the window in which the keys count as fresh.
      verifiedTokenMaxAgeMs: Math.min(60_000, keyRules.cacheMaxAgeMs),
    }),
    credentials: new AgentCredentials({
      exchange: (grantToken) => authorizationServer.exchange(grantToken, config.AUTH_AUDIENCE),
      verifyApiToken: auth.verifier,
      describe: (p) => describeCaller(i.staff, i.workspaces, p),
    }),
    devServer,
    devConsoleClientId: devServer && !config.CONSOLE_ISSUER ? config.CONSOLE_CLIENT_ID : null,
    toolList: new ToolListCache(),
  };
}
