import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Knex } from 'knex';
import { badRequest } from '../../shared/errors';
import type { Principal } from '../../shared/auth/principal';
import type { Logger } from '../../shared/logger';
import { requestLog } from '../middleware/request-log';
import { requireRouteScope } from './route-scope';
import type { HandlerResult, RouteDef } from './route';
import { runGoverned, runIdempotent } from './execution-policies';
import { assertAgentMayCall } from './agent-reach';
import { MAX_JSON_DEPTH, checkPart, nestsDeeperThan, requireParts, type PartResult } from './validate';

export interface RouteRuntime {
  db: Knex;
  authenticate(req: IncomingMessage): Promise<Principal>;
  defaultBodyLimitBytes: number;
  logger: Logger;
}

/** Whether a request says it has a body: a length other than 0, or chunks. */
export const hasBody = (req: IncomingMessage): boolean =>
  (req.headers['content-length'] !== undefined && req.headers['content-length'] !== '0') || req.headers['transfer-encoding'] !== undefined;

/** One request to a route, as the server in front read it (express, or a lean route). */
export interface RouteCall {
  req: IncomingMessage;
  res: ServerResponse;
  requestId: string;
  /** The path's parameters, decoded, before validation. */
  params: Record<string, string>;
  query: Record<string, unknown>;
  /** Whether the request says it has a body (a length other than 0, or chunks). */
  hasBody: boolean;
  /** Reads the body: the parsed JSON (bytes for a raw route), undefined when it is not of a type the route takes. */
  readBody(): Promise<unknown>;
}

/**
 * Every route's steps, whichever server runs it: authenticate → authorize → params → product
 * scope of the resource the path names → read the body (after auth, so strangers cannot make us
 * parse; after scope, so an out-of-scope resource is not found whatever the body says) → strict
 * zod parse of query and body → the handler, under its execution policy. Returns the handler's
 * result for the server to send, or nothing when the handler answered itself.
 */
export async function runRoute(route: RouteDef, rt: RouteRuntime, call: RouteCall): Promise<HandlerResult | void> {
  const { req, requestId } = call;
  const principal = route.access === 'bearer' ? await rt.authenticate(req) : null;
  if (route.authorize) await route.authorize(principal as never);
  assertAgentMayCall(route, principal);
  // Every part is checked, and every issue reported together; the resource's scope only when the path names one.
  const paramsPart = checkPart(route.params, call.params, 'params');
  if (paramsPart.ok) await requireRouteScope(rt.db, route, principal, paramsPart.data);
  let raw: unknown;
  if (route.body) {
    raw = await call.readBody();
    if (!route.rawBody && call.hasBody && raw === undefined) {
      throw badRequest('Send the body as JSON (content-type application/json).', undefined, 'unsupported_media_type');
    }
    if (!route.rawBody && nestsDeeperThan(raw, MAX_JSON_DEPTH)) {
      throw badRequest(`The request body nests deeper than ${MAX_JSON_DEPTH} levels.`, undefined, 'body_too_deep');
    }
  } else if (call.hasBody) {
    throw badRequest('This operation takes no request body.', undefined, 'unexpected_body');
  }
  const queryPart: PartResult =
    !route.query && Object.keys(call.query).length > 0
      ? {
          ok: false,
          issues: Object.keys(call.query).map((k) => ({ path: `query.${k}`, message: 'this operation takes no query parameters' })),
        }
      : checkPart(route.query, call.query, 'query');
  const bodyPart = checkPart(route.body, raw ?? {}, 'body', undefined);
  const [params, query, body] = requireParts(paramsPart, queryPart, bodyPart) as [Record<string, string>, unknown, unknown];
  const run = () =>
    route.handler({
      params,
      query,
      body,
      principal,
      headers: req.headers,
      requestId,
      get log() {
        return requestLog(req, rt.logger);
      },
      req,
      res: call.res,
    } as never);
  const routeKey = `${route.method.toUpperCase()} ${route.path}`;
  const governed = route.governedAction && principal?.agentClientId;
  const invoke = () =>
    governed ? runGoverned(rt, route.governedAction!, principal, { params, body }, req.headers, requestId, run) : run();
  return route.idempotency === 'required' && principal
    ? runIdempotent(rt, routeKey, principal, { params, query, body }, req, requestId, invoke)
    : invoke();
}
