import express, { type Express, type NextFunction, type Request, type Response } from 'express';
import type { RouteDef } from './route';
import { Problem } from '../../shared/errors';
import { requireGovernedRoutes } from './governed-routes';
import { hasBody, runRoute, type RouteRuntime } from './serve-route';

export type MountOptions = RouteRuntime;

/** The JSON types a route's body may come as. */
const jsonTypesOf = (route: RouteDef): string[] => ['application/json', 'application/*+json', ...(route.extraBodyTypes ?? [])];

/** Refuses to start with a route whose declarations leave a hole. */
function checkRoutes(routes: RouteDef[]): void {
  requireGovernedRoutes(routes);
  for (const route of routes) {
    // A private route that says nothing about product scope would be a hole: refuse to start.
    if (route.access === 'bearer' && !route.scope) throw new Error(`${route.operationId} declares no product scope`);
    // A handler may check scope in its own read only when nothing before that read keeps anything:
    // an idempotency record is claimed before the handler runs, so such a route's scope is checked
    // first. (A governed agent call claims its approved step only once the action's resources have
    // been read within the caller's scope: normaliseAction answers 404 first.)
    if (typeof route.scope === 'object' && route.scope.inRead && route.method !== 'get' && route.idempotency) {
      throw new Error(`${route.operationId} keeps an idempotency record before its handler, so its scope is checked before it`);
    }
  }
}

/** Mounts each route on express, its steps those of `runRoute`, its body read by express's body parsers. */
export function mountRoutes(app: Express, routes: RouteDef[], opts: MountOptions): void {
  checkRoutes(routes);
  for (const route of routes) {
    const limit = route.bodyLimitBytes ?? opts.defaultBodyLimitBytes;
    const routeKey = `${route.method.toUpperCase()} ${route.path}`;
    const bodyParser = route.rawBody
      ? express.raw({ limit, type: () => true })
      : express.json({ limit, type: jsonTypesOf(route), strict: false });

    const handle = async (req: Request, res: Response, next: NextFunction) => {
      try {
        res.locals.route = routeKey;
        const result = await runRoute(route, opts, {
          req,
          res,
          requestId: String(res.locals.requestId),
          params: req.params as Record<string, string>,
          query: (req.query ?? {}) as Record<string, unknown>,
          hasBody: hasBody(req),
          readBody: async () => {
            await new Promise<void>((resolve, reject) => bodyParser(req, res, (err?: unknown) => (err ? reject(err) : resolve())));
            return req.body as unknown;
          },
        });
        if (!result) return;
        if (result.contentType) res.type(result.contentType);
        for (const [k, v] of Object.entries(result.headers ?? {})) res.setHeader(k, v);
        if (result.json !== undefined)
          res
            .status(result.status)
            .type(result.contentType ?? 'application/json')
            .send(result.json);
        else if (result.body === undefined) res.status(result.status).end();
        else res.status(result.status).json(result.body);
      } catch (err) {
        next(err);
      }
    };
    app[route.method](route.path, handle);
  }
}

/**
 * A known path asked with a method it does not take: 405 with `Allow`, not the 404 of a path that
 * does not exist. Mounted after every other handler, so it answers only what nothing else did.
 */
export function mountMethodNotAllowed(app: Express, routes: RouteDef[]): void {
  const methods = new Map<string, Set<string>>();
  for (const r of routes) {
    const set = methods.get(r.path) ?? new Set<string>();
    set.add(r.method.toUpperCase());
    if (r.method === 'get') set.add('HEAD');
    methods.set(r.path, set);
  }
  // A router of its own: these are not operations (the OpenAPI document lists the routes, not these).
  // Paths are exact here as everywhere (the app's case-sensitive, strict routing is not a router's default).
  const router = express.Router({ caseSensitive: true, strict: true });
  for (const [path, allowed] of methods) {
    const allow = [...allowed].sort().join(', ');
    router.all(path, (req: Request, _res: Response, next: NextFunction) => {
      if (req.method === 'OPTIONS' || allowed.has(req.method)) return next();
      next(
        new Problem(
          405,
          'method_not_allowed',
          'Method not allowed',
          `${req.method} is not an operation of this path; it takes ${allow}.`,
          'correctable',
          undefined,
          { allow },
        ),
      );
    });
  }
  app.use(router);
}
