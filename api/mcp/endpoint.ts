import express, { type Express, type NextFunction, type Request, type RequestHandler, type Response } from 'express';
import { InvalidTokenError } from '@modelcontextprotocol/sdk/server/auth/errors.js';
import { requireBearerAuth } from '@modelcontextprotocol/sdk/server/auth/middleware/bearerAuth.js';
import { mcpAuthMetadataRouter } from '@modelcontextprotocol/sdk/server/auth/router.js';
import type { AuthInfo } from '@modelcontextprotocol/sdk/server/auth/types.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { Problem, badRequest } from '../../shared/errors';
import type { Principal } from '../../shared/auth/principal';
import type { Logger } from '../../shared/logger';
import type { McpGrant } from '../../shared/mcp/grant';
import type { RouteDef } from '../http/route';
import { PUBLIC_TOOL, buildMcpServer } from './tools';
import type { AgentEndpoint, ApiDeps } from '../deps';
import { requestLog } from '../middleware/request-log';
import { problemBody } from '../middleware/problem';
import { MAX_JSON_DEPTH, nestsDeeperThan } from '../http/validate';
import { chargeRoute, type RateLimitRules } from '../middleware/rate-limit';
import type { RateLimiter } from '../../shared/ratelimit/rate-limiter';

/** What may be asked without a grant: the handshake, the tool list, and get_platform_info. */
const PUBLIC_METHODS = new Set(['initialize', 'notifications/initialized', 'notifications/cancelled', 'ping', 'tools/list']);

function needsGrant(m: unknown): boolean {
  if (!m || typeof m !== 'object' || !('method' in m)) return false;
  const { method, params } = m as { method: unknown; params?: { name?: unknown } };
  if (method === 'tools/call') return params?.name !== PUBLIC_TOOL;
  return typeof method !== 'string' || !PUBLIC_METHODS.has(method);
}

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
 * Mounts the agent endpoint: RFC 9728 protected resource metadata, the embedded development
 * authorization server when there is one, and POST /mcp (stateless Streamable HTTP). Every
 * 401 carries `WWW-Authenticate: Bearer … resource_metadata="…"`, which starts the client's
 * OAuth flow.
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

  const refuse = (res: Response, detail: string) => {
    const err = new InvalidTokenError(detail);
    res.set(
      'WWW-Authenticate',
      `Bearer error="${err.errorCode}", error_description="${detail.replace(/"/g, "'")}", resource_metadata="${endpoint.metadataUrl}"`,
    );
    res.status(401).json(err.toResponseObject());
  };

  const serve = async (req: Request, res: Response, principal: Principal | null) => {
    const requestId = String(res.locals.requestId);
    const log: Logger = requestLog(req, logger);
    const clientKey = req.ip ?? 'unknown';
    const charge = (route: RouteDef) => chargeRoute(limits.limiter, limits.rules, `${route.method.toUpperCase()} ${route.path}`, clientKey);
    const server = buildMcpServer({ deps, endpoint, routes, principal, requestId, log, charge });
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    res.on('close', () => {
      void transport.close();
      void server.close();
    });
    await server.connect(transport);
    await transport.handleRequest(req, res, req.body);
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
      const token = BEARER.exec(req.headers.authorization ?? '')?.[1];
      if (!req.headers.authorization && !needsGrant(req.body)) {
        await serve(req, res, null);
        return;
      }
      // Verify first so that an unreachable issuer is a 503, not the middleware's 500.
      let grant: McpGrant | undefined;
      let refusal = 'Missing Authorization header';
      if (token) {
        try {
          grant = await endpoint.verifyGrant(token);
        } catch (err) {
          if (!(err instanceof Problem) || err.status !== 401) throw err;
          refusal = err.detail;
        }
      }
      const bearer = requireBearerAuth({
        verifier: {
          async verifyAccessToken(t): Promise<AuthInfo> {
            if (!grant) throw new InvalidTokenError(refusal);
            return { token: t, clientId: grant.clientId, scopes: grant.scopes, expiresAt: grant.expiresAt, resource: resourceUrl };
          },
        },
        requiredScopes: [endpoint.scope],
        resourceMetadataUrl: endpoint.metadataUrl,
        expectedResource: resourceUrl,
      });
      // The SDK's middleware answers refusals itself (401 or 403 with WWW-Authenticate); it resolves when done.
      let passed = false;
      await (bearer(req, res, () => (passed = true)) as unknown as Promise<void>);
      if (!passed || !grant || !token) return;

      let principal: Principal;
      try {
        principal = await endpoint.credentials.principalFor(grant, token);
      } catch (err) {
        if (err instanceof Problem && err.status === 401) {
          refuse(res, err.detail);
          return;
        }
        throw err;
      }
      await serve(req, res, principal);
    } catch (err) {
      next(err);
    }
  });

  // Stateless: no server-sent stream to resume and no session to end.
  const notAllowed = (_req: Request, res: Response) => {
    res.setHeader('allow', 'POST');
    res.status(405).json({ jsonrpc: '2.0', error: { code: -32000, message: 'Method not allowed: POST JSON-RPC messages.' }, id: null });
  };
  app.get(resourceUrl.pathname, notAllowed);
  app.delete(resourceUrl.pathname, notAllowed);
}
