import express, { type Express, type NextFunction, type Request, type Response } from 'express';
import type { Knex } from 'knex';
import { badRequest } from '../../shared/errors';
import type { Principal } from '../../shared/auth/principal';
import type { Logger } from '../../shared/logger';
import { requireRouteScope } from './route-scope';
import { requireGovernedRoutes } from './governed-routes';
import type { RouteDef } from './route';
import { runGoverned, runIdempotent } from './execution-policies';
import { MAX_JSON_DEPTH, nestsDeeperThan, parsePart } from './validate';
import { requestLog } from '../middleware/request-log';

export interface MountOptions {
  db: Knex;
  authenticate(req: Request): Promise<Principal>;
  defaultBodyLimitBytes: number;
  logger: Logger;
}

const hasBody = (req: Request) =>
  (req.headers['content-length'] !== undefined && req.headers['content-length'] !== '0') || req.headers['transfer-encoding'] !== undefined;

/**
 * Mounts each route as: authenticate → authorize → params → product scope of the resource the
 * path names → parse body (after auth, so strangers cannot make us parse) → strict zod parse of
 * query and body → handler → JSON response.
 */
export function mountRoutes(app: Express, routes: RouteDef[], opts: MountOptions): void {
  requireGovernedRoutes(routes);
  for (const route of routes) {
    // A private route that says nothing about product scope would be a hole: refuse to start.
    if (route.access === 'bearer' && !route.scope) throw new Error(`${route.operationId} declares no product scope`);
    // A handler may check scope in its own read only when reading is all it does.
    if (typeof route.scope === 'object' && route.scope.inRead && route.method !== 'get') {
      throw new Error(`${route.operationId} changes something, so its scope is checked before the handler`);
    }
    const jsonTypes = ['application/json', 'application/*+json', ...(route.extraBodyTypes ?? [])];
    const limit = route.bodyLimitBytes ?? opts.defaultBodyLimitBytes;
    const routeKey = `${route.method.toUpperCase()} ${route.path}`;
    const bodyParser = route.rawBody ? express.raw({ limit, type: () => true }) : express.json({ limit, type: jsonTypes, strict: false });

    const handle = async (req: Request, res: Response, next: NextFunction) => {
      try {
        res.locals.route = routeKey;
        const principal = route.access === 'bearer' ? await opts.authenticate(req) : null;
        if (principal) res.locals.principal = principal;
        if (route.authorize) await route.authorize(principal as never);
        const params = route.params ? parsePart(route.params, req.params, 'params') : {};
        // Out-of-scope resources are not found, whatever the body says: checked before it is read.
        await requireRouteScope(opts.db, route, principal, params);
        if (route.body) {
          await new Promise<void>((resolve, reject) => bodyParser(req, res, (err?: unknown) => (err ? reject(err) : resolve())));
          if (!route.rawBody && hasBody(req) && req.body === undefined) {
            throw badRequest(`Send the body as JSON (content-type ${jsonTypes[0]}).`, undefined, 'unsupported_media_type');
          }
          if (!route.rawBody && nestsDeeperThan(req.body, MAX_JSON_DEPTH)) {
            throw badRequest(`The request body nests deeper than ${MAX_JSON_DEPTH} levels.`, undefined, 'body_too_deep');
          }
        } else if (hasBody(req)) {
          throw badRequest('This operation takes no request body.', undefined, 'unexpected_body');
        }
        const query = route.query ? parsePart(route.query, req.query ?? {}, 'query') : {};
        if (!route.query && Object.keys(req.query ?? {}).length > 0) throw badRequest('This operation takes no query parameters.');
        const body = route.body ? parsePart(route.body, req.body ?? {}, 'body') : undefined;
        const run = () =>
          route.handler({
            params,
            query,
            body,
            principal,
            headers: req.headers,
            requestId: String(res.locals.requestId),
            get log() {
              return requestLog(req, opts.logger);
            },
            req,
            res,
          } as never);
        const requestId = String(res.locals.requestId);
        const governed = route.governedAction && principal?.agentClientId;
        const invoke = () =>
          governed ? runGoverned(opts, route.governedAction!, principal, { params, body }, req.headers, requestId, run) : run();
        const result =
          route.idempotency === 'required' && principal
            ? await runIdempotent(opts, routeKey, principal, { params, query, body }, req, requestId, invoke)
            : await invoke();
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
