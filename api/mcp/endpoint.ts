import express, { type Express, type NextFunction, type Request, type RequestHandler, type Response } from 'express';
import { mcpAuthMetadataRouter } from '@modelcontextprotocol/sdk/server/auth/router.js';
import {
  OAuthError,
  OAuthErrorCode,
  WebStandardStreamableHTTPServerTransport,
  bearerAuthChallengeResponse,
  createMcpHandler,
  isLegacyRequest,
  type AuthInfo,
} from '@modelcontextprotocol/server';
import { Problem, badRequest } from '../../shared/errors';
import type { Principal } from '../../shared/auth/principal';
import type { Logger } from '../../shared/logger';
import type { McpGrant } from '../../shared/mcp/grant';
import type { RouteDef } from '../http/route';
import { buildMcpServer, needsGrant, type ToolScope } from './tools';
import type { AgentEndpoint, ApiDeps } from '../deps';
import { requestLog } from '../middleware/request-log';
import { problemBody } from '../middleware/problem';
import { MAX_JSON_DEPTH, nestsDeeperThan } from '../http/validate';
import { chargeRoute, type RateLimitRules } from '../middleware/rate-limit';
import type { RateLimiter } from '../../shared/ratelimit/rate-limiter';
import { sendWebResponse, webRequestOf } from './web-exchange';
import { consentActions } from './consent-actions';

/**
 * One JSON-RPC message per request. Batches (dropped from MCP in the 2025-06-18 revision) would
 * let one request, charged once, run up to a hundred tool calls.
 */
const BATCH_REFUSED = {
  jsonrpc: '2.0',
  error: { code: -32600, message: 'Invalid Request: batches are not supported; send one JSON-RPC message per request.' },
  id: null,
};

const BEARER = /^Bearer\s+(\S+)$/i;

/**
 * Serves one message, in the protocol version it speaks, with the SDK's own transports and one
 * server factory for both: 2025-11-25 (an `initialize` handshake, then stateless requests answered
 * in JSON) and 2026-07-28 (stateless by design: no handshake, `server/discover`, a per-request
 * envelope, `resultType` on results).
 */
async function answer(req: Request, res: Response, scope: Omit<ToolScope, 'era'>, authInfo: AuthInfo | undefined) {
  const request = webRequestOf(req, res);
  const exchange = { ...(authInfo ? { authInfo } : {}), parsedBody: req.body as unknown };
  if (await isLegacyRequest(request, req.body)) {
    const server = buildMcpServer({ ...scope, era: 'legacy' });
    const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    await server.connect(transport);
    try {
      await sendWebResponse(res, await transport.handleRequest(request, exchange));
    } finally {
      void transport.close();
      void server.close();
    }
    return;
  }
  const modern = createMcpHandler(() => buildMcpServer({ ...scope, era: 'modern' }), {
    legacy: 'reject',
    onerror: (err) => scope.log.debug({ err: { message: err.message } }, 'mcp request refused'),
  });
  await sendWebResponse(res, await modern.fetch(request, exchange));
}

/**
 * Mounts the agent endpoint: RFC 9728 protected resource metadata, the embedded development
 * authorization server when there is one, and POST /mcp. Every 401 carries
 * `WWW-Authenticate: Bearer … scope="…", resource_metadata="…"`, which starts the client's OAuth
 * flow; a tool the grant's scope does not cover is a 403 `insufficient_scope` naming the scope.
 */
export function mountAgentEndpoint(
  app: Express,
  deps: ApiDeps,
  endpoint: AgentEndpoint,
  routes: RouteDef[],
  limits: { limiter: RateLimiter; rules: RateLimitRules },
): void {
  const { logger } = deps;
  if (endpoint.devServer) {
    // Loaded only in development, like the server itself (see setup.ts).
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const { mountDevAuthorizationServer } = require('../oauth/mount') as typeof import('../oauth/mount');
    mountDevAuthorizationServer(app, endpoint.devServer, {
      scope: endpoint.scope,
      logger,
      grantAllows: consentActions(routes),
      ...(endpoint.devConsoleClientId ? { firstPartyClientId: endpoint.devConsoleClientId } : {}),
    });
  }

  const resourceUrl = new URL(endpoint.resourceUrl);
  const suffixedPath = new URL(endpoint.metadataUrl).pathname;

  // The metadata router needs the authorization server's metadata, discovered on first use.
  let metadataRouter: Promise<RequestHandler> | undefined;
  const metadata = () =>
    (metadataRouter ??= endpoint.authorizationServer
      .metadata()
      .then((oauthMetadata) =>
        mcpAuthMetadataRouter({
          oauthMetadata,
          resourceServerUrl: resourceUrl,
          scopesSupported: [endpoint.scope],
          resourceName: 'Flightdeck',
          serviceDocumentationUrl: new URL('/api/v1/openapi.json', resourceUrl),
        }),
      )
      .catch((err: unknown) => {
        metadataRouter = undefined;
        throw err;
      }));
  app.use((req: Request, res: Response, next: NextFunction) => {
    const path = req.url.split('?')[0]!;
    if (path !== '/.well-known/oauth-protected-resource' && path !== suffixedPath && path !== '/.well-known/oauth-authorization-server') {
      next();
      return;
    }
    // RFC 9728 at both the plain and the path-suffixed location.
    if (path === '/.well-known/oauth-protected-resource') req.url = suffixedPath;
    res.locals.route = 'oauth-metadata';
    metadata().then((router) => router(req, res, next), next);
  });

  /** 401 with the challenge that starts OAuth: the error, the scope to ask for, and where the metadata is. */
  const refuse = (res: Response, detail: string) =>
    sendWebResponse(
      res,
      bearerAuthChallengeResponse(new OAuthError(OAuthErrorCode.InvalidToken, detail.replace(/"/g, "'")), {
        requiredScopes: [endpoint.scope],
        resourceMetadataUrl: endpoint.metadataUrl,
      }),
    );

  const scopeOf = (req: Request, res: Response, principal: Principal | null): Omit<ToolScope, 'era'> => {
    const requestId = String(res.locals.requestId);
    const log: Logger = requestLog(req, logger);
    const clientKey = req.ip ?? 'unknown';
    const charge = (route: RouteDef) => chargeRoute(limits.limiter, limits.rules, `${route.method.toUpperCase()} ${route.path}`, clientKey);
    return { deps, endpoint, routes, principal, requestId, log, charge };
  };

  const json = express.json({ limit: deps.config.BODY_LIMIT_BYTES, type: ['application/json'] });

  app.post(resourceUrl.pathname, json, async (req: Request, res: Response, next: NextFunction) => {
    res.locals.route = `POST ${resourceUrl.pathname}`;
    if (Array.isArray(req.body)) {
      res.status(400).json(BATCH_REFUSED);
      return;
    }
    // The REST body rules hold for tool arguments, two levels below the message (params.arguments),
    // and are checked before the SDK walks the message: thousands of levels overflowed its stack.
    if (nestsDeeperThan(req.body, MAX_JSON_DEPTH + 2)) {
      const problem = badRequest(`Tool arguments nest deeper than ${MAX_JSON_DEPTH} levels.`, undefined, 'body_too_deep');
      res.status(400).json({
        jsonrpc: '2.0',
        error: { code: -32600, message: `Invalid Request: ${problem.detail}`, data: problemBody(problem, String(res.locals.requestId)) },
        id: null,
      });
      return;
    }
    try {
      if (!req.headers.authorization && !needsGrant(req.body)) {
        await answer(req, res, scopeOf(req, res, null), undefined);
        return;
      }
      const token = BEARER.exec(req.headers.authorization ?? '')?.[1];
      if (!token) {
        await refuse(
          res,
          req.headers.authorization ? "Invalid Authorization header format, expected 'Bearer TOKEN'" : 'Missing Authorization header',
        );
        return;
      }
      // Verified here so that an unreachable issuer is a 503, not a 401 that would send a person to sign in again.
      let grant: McpGrant;
      try {
        grant = await endpoint.verifyGrant(token);
      } catch (err) {
        if (!(err instanceof Problem) || err.status !== 401) throw err;
        await refuse(res, err.detail);
        return;
      }
      const authInfo: AuthInfo = {
        token,
        clientId: grant.clientId,
        scopes: grant.scopes,
        expiresAt: grant.expiresAt,
        resource: resourceUrl,
        resourceMetadataUrl: endpoint.metadataUrl,
      };
      // A grant without the endpoint's scope may look around; each tool it calls answers the
      // step-up challenge (403 insufficient_scope), so it is never exchanged for a credential.
      let principal: Principal | null = null;
      if (grant.scopes.includes(endpoint.scope)) {
        try {
          principal = await endpoint.credentials.principalFor(grant, token);
        } catch (err) {
          if (err instanceof Problem && err.status === 401) {
            await refuse(res, err.detail);
            return;
          }
          throw err;
        }
      }
      await answer(req, res, scopeOf(req, res, principal), authInfo);
    } catch (err) {
      next(err);
    }
  });

  // Stateless in both protocol versions: no server-sent stream to resume and no session to end.
  const notAllowed = (_req: Request, res: Response) => {
    res.setHeader('allow', 'POST');
    res.status(405).json({ jsonrpc: '2.0', error: { code: -32000, message: 'Method not allowed: POST JSON-RPC messages.' }, id: null });
  };
  app.get(resourceUrl.pathname, notAllowed);
  app.delete(resourceUrl.pathname, notAllowed);
}
