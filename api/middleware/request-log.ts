import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { NextFunction, Request, Response } from 'express';
import type { Logger } from '../../shared/logger';

const ACCEPTABLE = /^[A-Za-z0-9._:-]{8,128}$/;

/** Keeps a caller's request id when it is sane (so traces join up), otherwise makes one. */
export function requestIdOf(req: IncomingMessage): string {
  const incoming = req.headers['x-request-id'];
  return typeof incoming === 'string' && ACCEPTABLE.test(incoming) ? incoming : randomUUID();
}

const STATE = Symbol('request log');

interface RequestLogState {
  id: string;
  /** The URL as it arrived: routers and the authorization server rewrite req.url on the way. */
  url: string;
  startMs: number;
  root: Logger;
  child?: Logger;
}

type Logged = IncomingMessage & { [STATE]?: RequestLogState };

const pathOf = (url: string) => {
  const q = url.indexOf('?');
  return q === -1 ? url : url.slice(0, q);
};

/**
 * The logger for what a request's code has to say: its lines carry the request id, method and
 * path. Made on first use, so requests that log nothing but their one summary line pay nothing.
 */
export function requestLog(req: IncomingMessage, fallback: Logger): Logger {
  const s = (req as Logged)[STATE];
  if (!s) return fallback;
  return (s.child ??= s.root.child({ req: { id: s.id, method: req.method, path: pathOf(s.url) }, requestId: s.id }));
}

/**
 * Gives a request its id (returned, and sent back as `x-request-id`) and logs it once when the
 * response is done, with id, method, path, route, status and latency; 5xx at error, and a
 * response the client did not wait for marked aborted. Only what we need: never headers (tokens)
 * or bodies (assets, personal data). Nothing is built for a line the configured level would drop.
 * `routeOf` is read when the line is written: the route is known only once one matched.
 */
export function beginRequestLog(req: IncomingMessage, res: ServerResponse, logger: Logger, routeOf: () => unknown): string {
  const id = requestIdOf(req);
  const url = req.url ?? '';
  const state: RequestLogState = { id, url, startMs: Date.now(), root: logger };
  (req as Logged)[STATE] = state;
  res.setHeader('x-request-id', id);
  // 'close' comes once, after the response was sent or when the client went away before that.
  res.once('close', () => {
    const status = res.statusCode;
    const level = status >= 500 ? 'error' : 'info';
    if (!logger.isLevelEnabled(level)) return;
    const fields: Record<string, unknown> = {
      req: { id, method: req.method, path: pathOf(url) },
      route: routeOf(),
      requestId: id,
      res: { statusCode: status },
      responseTime: Date.now() - state.startMs,
    };
    if (!res.writableFinished) fields.aborted = true; // the client went away first
    if (level === 'error') fields.err = new Error(`failed with status code ${status}`);
    logger[level](fields, `${req.method} ${status}`);
  });
  return id;
}

/** First on every request through express: the request's id and its one log line (`beginRequestLog`). */
export function requestLogging(logger: Logger) {
  return (req: Request, res: Response, next: NextFunction): void => {
    const id = beginRequestLog(req, res, logger, () => res.locals.route);
    (req as Request & { id?: string }).id = id;
    res.locals.requestId = id;
    next();
  };
}
