import type { Request, Response } from 'express';
import { z } from 'zod';
import { Problem } from '../../shared/errors';
import { hasPermission, isHuman, type Principal } from '../../shared/auth/principal';
import type { ApiDeps } from '../deps';
import type { RouteDef } from '../http/route';
import { callRoute } from '../mcp/route-tools';
import { parsePart } from '../http/validate';
import { readCookie } from '../http/cookies';
import type { Draft } from './forms';
import { esc, layout, type Flash, type Viewer } from './html';
import { TIME_ZONE_COOKIE, timeZoneOr } from './time';
import { refusalInWords } from './words';
import { sameSecret, type ConsoleSession, type ConsoleSessions } from './session';
import { requestLog } from '../middleware/request-log';

export interface ConsoleDeps {
  api: ApiDeps;
  routes: RouteDef[];
  sessions: ConsoleSessions;
}

/** One signed-in request: who it is (decided from the API token, as the API decides) and what the nav may offer. */
export interface ConsoleRequest {
  principal: Principal;
  viewer: Viewer;
  flash: Flash | null;
  /** What the person typed into a form that was refused or awaits confirmation, for the page to show again. */
  draft: Draft | null;
  sessionId: string;
  session: ConsoleSession;
  /** Runs an API operation in process: its own authorisation, product scope, schema and handler. */
  call(operationId: string, args: Record<string, unknown>): Promise<Record<string, unknown>>;
  /** Checks arguments against an operation's body schema without running it (before asking a person to confirm). */
  check(operationId: string, args: Record<string, unknown>): void;
  /** Shows `flash` on the next page, and fills a form there from `draft`. */
  say(flash: Flash | null, draft?: Draft): Promise<void>;
}

export class SignInRequired extends Error {}

export async function consoleRequest(c: ConsoleDeps, req: Request, res: Response): Promise<ConsoleRequest> {
  const { api } = c;
  const loaded = await c.sessions.load(req);
  if (!loaded) throw new SignInRequired();
  const { id, session } = loaded;
  let principal: Principal;
  try {
    // What the person does here is recorded as done at the console, whatever issued the token.
    principal = { ...(await api.verifier(session.accessToken)), via: 'console' };
  } catch (err) {
    if (err instanceof Problem && err.status === 503) throw err;
    await c.sessions.destroy(res, id, session);
    throw new SignInRequired();
  }
  await api.workspaces.get(principal.advertiserId);
  const human = isHuman(principal);
  const viewer: Viewer = {
    userId: principal.userId,
    workspace: principal.advertiserId,
    csrf: session.csrf,
    staff: human && (await api.staff.isActive(principal.userId)),
    reconciler: human && hasPermission(principal, 'operator:reconcile'),
    approver: human && hasPermission(principal, 'agent:approve'),
    timeZone: timeZoneOr(readCookie(req, TIME_ZONE_COOKIE)),
  };
  // A form must carry the session's CSRF token; without it nothing runs, and nothing of the session is touched.
  if (req.method === 'POST') {
    const sent = typeof req.body?._csrf === 'string' ? req.body._csrf : '';
    if (!sameSecret(sent, session.csrf)) throw new FormNotOurs(viewer);
  }
  // Shown once: the next request, whatever it is, no longer carries them.
  const flash = session.flash ?? null;
  const draft = session.draft ?? null;
  if (flash || draft) {
    delete session.flash;
    delete session.draft;
    await c.sessions.save(id, session);
  }
  const log = requestLog(req, api.logger);
  const routeOf = (operationId: string) => {
    const route = c.routes.find((r) => r.operationId === operationId);
    if (!route) throw new Error(`no operation ${operationId}`);
    return route;
  };
  return {
    principal,
    viewer,
    flash,
    draft,
    sessionId: id,
    session,
    async call(operationId, args) {
      const route = routeOf(operationId);
      const result = await callRoute(route, args, { db: api.db, principal, requestId: String(res.locals.requestId), log });
      return (result.body ?? {}) as Record<string, unknown>;
    },
    check(operationId, args) {
      const { body } = routeOf(operationId);
      if (!body) return;
      const object = body instanceof z.ZodOptional ? body.unwrap() : body;
      const keys = object instanceof z.ZodObject ? Object.keys(object.shape) : Object.keys(args);
      parsePart(body, Object.fromEntries(keys.flatMap((k) => (k in args ? [[k, args[k]]] : []))), 'body');
    },
    async say(f, d) {
      if (f) session.flash = f;
      else delete session.flash;
      if (d) session.draft = d;
      else delete session.draft;
      await c.sessions.save(id, session);
    },
  };
}

/** A form without the session's CSRF token: refused (403), said over the viewer's own frame. */
export class FormNotOurs extends Problem {
  constructor(readonly viewer: Viewer) {
    super(
      403,
      'csrf_failed',
      'Forbidden',
      'The form was stale or not ours, so nothing was changed. Go back, reload the page and try again.',
      'correctable',
    );
  }
}

/**
 * A refusal as a page: "Not found" exactly as for something that does not exist, "Not allowed"
 * where the API answers 403, with a way back (to the page the form came from, for a stale form).
 */
export function problemPage(res: Response, err: Problem, viewer: Viewer | null, back = '/console'): void {
  const title = err.status === 404 ? 'Not found' : err.status === 403 ? 'Not allowed' : err.title;
  const body =
    err.status === 404
      ? '<p>There is nothing here for you: it does not exist, or it is not yours to see.</p>'
      : `<p>${esc(refusalInWords(err))}</p>`;
  const link =
    err.code === 'csrf_failed'
      ? `<p><a href="${esc(back)}">Back to the page you were on</a></p>`
      : '<p><a href="/console">Back to the console</a></p>';
  res
    .status(err.status)
    .type('html')
    .send(layout(title, body + link, viewer ?? (err instanceof FormNotOurs ? err.viewer : null)));
}
