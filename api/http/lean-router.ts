import type { IncomingMessage, ServerResponse } from 'node:http';
import proxyaddr from 'proxy-addr';
import { badRequest } from '../../shared/errors';
import type { Logger } from '../../shared/logger';
import type { RateLimiter } from '../../shared/ratelimit/rate-limiter';
import type { StaffCache } from '../../shared/staff/staff-cache';
import { logProblem, problemOf } from '../middleware/errors';
import { writeProblem } from '../middleware/problem';
import { chargeRequest, ruleFor, type RateLimitRules } from '../middleware/rate-limit';
import { beginRequestLog, requestLog } from '../middleware/request-log';
import type { HandlerResult, RouteDef } from './route';
import { hasBody, runRoute, type RouteRuntime } from './serve-route';

export interface LeanRouterOptions {
  limiter: RateLimiter;
  rules: RateLimitRules;
  staff: StaffCache;
  logger: Logger;
  /** Express's compiled `trust proxy` setting, so that the client's address is the one express would see. */
  trust: (addr: string, i: number) => boolean;
  /** Express's compiled `etag` setting, so that a lean answer carries the ETag express would send. */
  etag: (body: Buffer, encoding?: BufferEncoding) => string | undefined;
}

/** Serves a request and returns true, or returns false having touched nothing. */
export type LeanRouter = (req: IncomingMessage, res: ServerResponse) => boolean;

// A path segment of unreserved characters needs no percent-decoding; anything else goes to express.
const PLAIN_SEGMENT = /^[A-Za-z0-9._~-]+$/;
// A media type with no parameter but UTF-8, the only charset taken here.
const CONTENT_TYPE = /^\s*([a-z0-9!#$&^_.+-]+\/[a-z0-9!#$&^_.+-]+)\s*(?:;\s*charset\s*=\s*"?utf-8"?\s*)?$/i;

type Segment = { literal: string } | { param: string };
interface Compiled {
  route: RouteDef;
  method: string;
  /** Null when the path uses more than literals and `:params`: it might match anything, so requests of its method go to express. */
  segments: Segment[] | null;
}

function compile(route: RouteDef): Compiled {
  const parts = route.path.split('/').slice(1);
  const simple = parts.every((p) => /^(:[A-Za-z]\w*|[A-Za-z0-9._~-]+)$/.test(p));
  return {
    route,
    method: route.method.toUpperCase(),
    segments: simple ? parts.map((p) => (p.startsWith(':') ? { param: p.slice(1) } : { literal: p })) : null,
  };
}

/** The route express would run for this method and path, with its parameters, when it is one of ours at all. */
function firstMatch(table: Compiled[], method: string, parts: string[]): { compiled: Compiled; params: Record<string, string> } | null {
  for (const c of table) {
    if (c.method !== method) continue;
    if (!c.segments) return null;
    if (c.segments.length !== parts.length) continue;
    const params: Record<string, string> = {};
    let ok = true;
    for (let i = 0; i < parts.length && ok; i++) {
      const s = c.segments[i]!;
      if ('literal' in s) ok = s.literal === parts[i];
      else params[s.param] = parts[i]!;
    }
    if (ok) return { compiled: c, params };
  }
  return null;
}

/**
 * Serves the routes marked `lean` (the pixel, and reads that agents poll) straight on node's
 * request and response, never entering express: its routing through every mounted layer, its
 * request and response helpers and its body parser cost more than everything else such a
 * request does. They are the same routes: the same request log, rate limit, steps (`runRoute`),
 * problem bodies and ETag, in the same order.
 *
 * It takes only plain requests, and leaves the rest to express, where every route is mounted
 * too: a query string, a percent-encoded path, HEAD or a conditional GET, a body on a GET, a
 * body that is chunked, encoded, over the limit or of another type or charset than the route's
 * JSON in UTF-8. A route comes here only when express would pick it for that path: routes are
 * matched in the order they are mounted.
 */
export function leanRouter(routes: RouteDef[], rt: RouteRuntime, opts: LeanRouterOptions): LeanRouter {
  for (const route of routes.filter((r) => r.lean)) {
    const plainRead = route.method === 'get' && !route.body;
    const plainPublicPost = route.method === 'post' && route.access === 'public' && !route.rawBody;
    if ((!plainRead && !plainPublicPost) || route.idempotency === 'required' || route.governedAction) {
      throw new Error(`${route.operationId} cannot be lean: only reads, and public posts of JSON without an idempotency policy`);
    }
  }
  const table = routes.map(compile);

  // Express's body parser looks at the type, charset and encoding of any request that states a
  // length, 0 included: only the cases where that ends as a plain JSON read are taken here.
  const bodyOk = (req: IncomingMessage, route: RouteDef): boolean => {
    const h = req.headers;
    if (h['transfer-encoding'] !== undefined || h['content-encoding'] !== undefined) return false;
    const length = h['content-length'];
    if (length === undefined) return true;
    if (!route.body) return length === '0';
    if (!/^\d+$/.test(length) || Number(length) > (route.bodyLimitBytes ?? rt.defaultBodyLimitBytes)) return false;
    if (length === '0' && h['content-type'] === undefined) return true;
    const type = CONTENT_TYPE.exec(h['content-type'] ?? '')?.[1]?.toLowerCase();
    return type === 'application/json' || (type !== undefined && (route.extraBodyTypes ?? []).includes(type));
  };

  /** Serves a request; `routed` is called once it reaches its route (as express names the route only then, in its log line). */
  const serve = async (
    req: IncomingMessage,
    res: ServerResponse,
    route: RouteDef,
    params: Record<string, string>,
    requestId: string,
    routed: () => void,
  ) => {
    try {
      const refused = await chargeRequest(
        opts.limiter,
        ruleFor(opts.rules, req.method!, req.url!),
        proxyaddr(req, opts.trust),
        opts.staff,
        res,
      );
      if (refused) {
        if (refused.cause !== undefined) opts.logger.error({ err: refused.cause, requestId }, 'rate limiter unavailable');
        throw refused.problem;
      }
      routed();
      const result = await runRoute(route, rt, {
        req,
        res,
        requestId,
        params,
        query: {},
        hasBody: hasBody(req),
        readBody: () => readJson(req),
      });
      if (result) send(res, result, opts.etag);
    } catch (err) {
      const problem = problemOf(err);
      logProblem(requestLog(req, opts.logger), err, problem, requestId);
      if (res.headersSent) res.destroy();
      else writeProblem(res, problem, requestId);
    }
  };

  return (req, res) => {
    const url = req.url ?? '';
    const method = req.method ?? '';
    if ((method !== 'GET' && method !== 'POST') || url.includes('?') || url[0] !== '/') return false;
    if (method === 'GET' && (req.headers['if-none-match'] !== undefined || req.headers['if-modified-since'] !== undefined)) return false;
    const parts = url.split('/').slice(1);
    if (!parts.every((p) => PLAIN_SEGMENT.test(p))) return false;
    const match = firstMatch(table, method, parts);
    if (!match || !match.compiled.route.lean || !bodyOk(req, match.compiled.route)) return false;
    const { route } = match.compiled;
    let routeKey: string | undefined;
    const requestId = beginRequestLog(req, res, opts.logger, () => routeKey);
    void serve(req, res, route, match.params, requestId, () => (routeKey = `${match.compiled.method} ${route.path}`));
    return true;
  };
}

/** The body as express's JSON parser reads it: empty is `{}`, a UTF-8 byte order mark is dropped. */
export async function readJson(req: IncomingMessage): Promise<unknown> {
  if (req.headers['content-length'] === undefined) return undefined;
  const chunks: Buffer[] = [];
  const incomplete = () => badRequest('The request body was incomplete.', undefined, 'incomplete_body');
  // The client may have gone while the rate limit was asked: a destroyed request never ends.
  if (req.destroyed && !req.readableEnded) throw incomplete();
  await new Promise<void>((resolve, reject) => {
    req.on('data', (c: Buffer) => chunks.push(c));
    req.once('end', resolve);
    req.once('error', () => reject(incomplete()));
    req.once('close', () => (req.readableEnded ? resolve() : reject(incomplete())));
  });
  let text = Buffer.concat(chunks).toString('utf8');
  if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
  if (text.length === 0) return {};
  try {
    return JSON.parse(text);
  } catch {
    throw badRequest('The request body is not valid JSON.', undefined, 'malformed_json');
  }
}

/** A handler's result as express's `res.json` sends it. */
function send(res: ServerResponse, result: HandlerResult, etag: LeanRouterOptions['etag']): void {
  for (const [k, v] of Object.entries(result.headers ?? {})) res.setHeader(k, v);
  res.statusCode = result.status;
  if (result.json === undefined && result.body === undefined) {
    res.end();
    return;
  }
  const bytes = Buffer.from(result.json ?? JSON.stringify(result.body), 'utf8');
  res.setHeader('content-type', `${result.contentType ?? 'application/json'}; charset=utf-8`);
  res.setHeader('content-length', bytes.length);
  const tag = etag(bytes);
  if (tag) res.setHeader('etag', tag);
  res.end(bytes);
}
