import { adapterRoutes } from './routes/adapters';
import type { RequestListener } from 'node:http';
import express, { type Express } from 'express';
import { RateLimiter } from '../shared/ratelimit/rate-limiter';
import { staffVersionKey } from '../shared/staff/staff-version';
import type { ApiDeps } from './deps';
import type { RouteDef } from './http/route';
import { mountMethodNotAllowed, mountRoutes, type MountOptions } from './http/mount';
import { leanRouter, type LeanRouter, type LeanRouterOptions } from './http/lean-router';
import { authenticator } from './middleware/authenticate';
import { errorHandler, unknownRoute } from './middleware/errors';
import { rateLimit, rateLimitRules } from './middleware/rate-limit';
import { requestLogging } from './middleware/request-log';
import { assetFileRoutes } from './routes/asset-files';
import { authRoutes } from './routes/auth-context';
import { discoveryRoutes } from './routes/discovery';
import { pixelRoutes } from './routes/pixel';
import { readinessRoutes } from './routes/readiness';
import { campaignRoutes } from './routes/campaigns';
import { bookingRoutes } from './routes/bookings';
import { inFlightRoutes } from './routes/in-flight';
import { ruleRoutes } from './routes/rules';
import { dailyCapRoutes } from './routes/daily-caps';
import { fulfilmentRoutes } from './routes/fulfilment';
import { browserJobRoutes } from './routes/browser-jobs';
import { agentRoutes } from './routes/agent';
import { studyRoutes } from './routes/studies';
import { personaRoutes } from './routes/personas';
import { buyerSessionRoutes } from './routes/buyer-sessions';
import { audienceRoutes } from './routes/audiences';
import { creativeRoutes } from './routes/creatives';
import { assetRoutes } from './routes/assets';
import { mountQueueDashboard } from './routes/queue-dashboard';
import { billingRoutes } from './routes/billing';
import { deliveryRoutes } from './routes/delivery';
import { reconciliationRoutes } from './routes/reconciliation';
import { workspaceRoutes } from './routes/workspace';
import { webhookRoutes } from './routes/webhooks';
import { mountSandboxCheckout } from './routes/sandbox-checkout';
import { measurementRoutes } from './routes/measurement';
import { optimizationRoutes } from './routes/optimizations';
import { studyArtifactRoutes } from './routes/study-artifacts';
import { mountAgentEndpoint } from './mcp/endpoint';
import { mountConsole } from './console/mount';

/** Every route of the API; the OpenAPI document is built from this same list. */
export function apiRoutes(deps: ApiDeps): RouteDef[] {
  const routes: RouteDef[] = [];
  routes.push(
    ...authRoutes(deps),
    ...pixelRoutes(deps),
    ...readinessRoutes(deps),
    ...assetFileRoutes(deps),
    ...campaignRoutes(deps),
    ...bookingRoutes(deps),
    ...inFlightRoutes(deps),
    ...dailyCapRoutes(deps),
    ...ruleRoutes(deps),
    ...adapterRoutes(deps),
    ...fulfilmentRoutes(deps),
    ...browserJobRoutes(deps),
    ...agentRoutes(deps),
    ...studyRoutes(deps),
    ...personaRoutes(deps),
    ...buyerSessionRoutes(deps),
    ...assetRoutes(deps),
    ...creativeRoutes(deps),
    ...audienceRoutes(deps),
    ...billingRoutes(deps),
    ...workspaceRoutes(deps),
    ...deliveryRoutes(deps),
    ...reconciliationRoutes(deps),
    ...measurementRoutes(deps),
    ...optimizationRoutes(deps),
    ...studyArtifactRoutes(deps),
    ...webhookRoutes(deps),
    ...discoveryRoutes(deps, () => routes),
  );
  return routes;
}

/** What express and the lean router in front of it share: one route list, one rate limiter, one authentication. */
export interface ApiParts {
  routes: RouteDef[];
  limiter: RateLimiter;
  runtime: MountOptions;
}

export const apiParts = (deps: ApiDeps): ApiParts => ({
  routes: apiRoutes(deps),
  limiter: new RateLimiter(deps.redis, deps.redisPrefix, staffVersionKey(deps.redisPrefix)),
  runtime: {
    db: deps.db,
    authenticate: authenticator(deps.verifier, deps.workspaces),
    defaultBodyLimitBytes: deps.config.BODY_LIMIT_BYTES,
    logger: deps.logger,
  },
});

/** The lean router over the routes marked `lean`, with express's own settings for addresses and ETags. */
export function leanRoutes(deps: ApiDeps, parts: ApiParts, app: Express): LeanRouter {
  return leanRouter(parts.routes, parts.runtime, {
    limiter: parts.limiter,
    rules: rateLimitRules(deps.config),
    staff: deps.staff,
    logger: deps.logger,
    trust: app.get('trust proxy fn') as LeanRouterOptions['trust'],
    etag: app.get('etag fn') as LeanRouterOptions['etag'],
  });
}

/**
 * The API's request listener: plain requests to the routes marked `lean` go straight to them
 * (`http/lean-router.ts`), everything else through express.
 */
export function apiListener(deps: ApiDeps): RequestListener {
  const parts = apiParts(deps);
  const app = buildApp(deps, parts);
  const lean = leanRoutes(deps, parts, app);
  return (req, res) => {
    if (!lean(req, res)) app(req, res);
  };
}

export function buildApp(deps: ApiDeps, { routes, limiter, runtime }: ApiParts = apiParts(deps)): Express {
  const { config, logger } = deps;
  const app = express();
  app.disable('x-powered-by');
  app.set('trust proxy', config.TRUST_PROXY);
  app.set('query parser', 'simple');
  // Paths are exact: /Personas/Extract or a trailing slash must not slip past per-route rules (rate limits).
  app.set('case sensitive routing', true);
  app.set('strict routing', true);

  // The lean router (apiListener) does what the two layers below do for the requests it takes:
  // a layer added in front of the routes must be added there too, or only for non-lean paths.
  app.use(requestLogging(logger));

  const limits = rateLimitRules(config);
  app.use(rateLimit(limiter, limits, deps.staff, logger));

  // Cross-origin pages post pageviews to the public pixel.
  app.options('/api/v1/t/:pixelKey', (_req, res) => {
    res.setHeader('access-control-allow-origin', '*');
    res.setHeader('access-control-allow-methods', 'POST');
    res.setHeader('access-control-allow-headers', 'content-type, idempotency-key');
    res.setHeader('access-control-max-age', '86400');
    res.status(204).end();
  });

  // Before the REST routes: its authorization server parses its own bodies.
  if (deps.agentEndpoint) mountAgentEndpoint(app, deps, deps.agentEndpoint, routes, { limiter, rules: limits });

  mountRoutes(app, routes, runtime);

  mountQueueDashboard(app, deps);
  mountConsole(app, deps, routes);
  if (deps.payments.sandbox) mountSandboxCheckout(app, deps.payments.sandbox);

  mountMethodNotAllowed(app, routes);
  app.use(unknownRoute);
  app.use(errorHandler(logger));
  return app;
}
