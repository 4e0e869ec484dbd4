import type { Request, Response } from 'express';
import { Problem } from '../../shared/errors';
import { hasPermission, isHuman, type Principal } from '../../shared/auth/principal';
import type { ApiDeps } from '../deps';
import type { RouteDef } from '../http/route';
import { callRoute } from '../mcp/route-tools';
import { layout, type Flash, type Viewer } from './html';
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
  sessionId: string;
  session: ConsoleSession;
  /** Runs an API operation in process: its own authorisation, product scope, schema and handler. */
  call(operationId: string, args: Record<string, unknown>): Promise<Record<string, unknown>>;
  /** Shows `flash` on the next page. */
  say(flash: Flash): Promise<void>;
}

export class SignInRequired extends Error {}

export async function consoleRequest(c: ConsoleDeps, req: Request, res: Response): Promise<ConsoleRequest> {
  const { api } = c;
  const loaded = await c.sessions.load(req);
  if (!loaded) throw new SignInRequired();
  const { id, session } = loaded;
  let principal: Principal;
  try {
    principal = await api.verifier(session.accessToken);
  } catch (err) {
    if (err instanceof Problem && err.status === 503) throw err;
    await c.sessions.destroy(res, id);
    throw new SignInRequired();
  }
  await api.workspaces.get(principal.advertiserId);
  if (req.method === 'POST') {
    const sent = typeof req.body?._csrf === 'string' ? req.body._csrf : '';
    if (!sameSecret(sent, session.csrf))
      throw new Problem(403, 'csrf_failed', 'Forbidden', 'The form was stale or not ours: reload the page and try again.', 'correctable');
  }
  const flash = session.flash ?? null;
  if (flash) {
    delete session.flash;
    await c.sessions.save(id, session);
  }
  const human = isHuman(principal);
  const viewer: Viewer = {
    userId: principal.userId,
    workspace: principal.advertiserId,
    csrf: session.csrf,
    staff: human && (await api.staff.isActive(principal.userId)),
    reconciler: human && hasPermission(principal, 'operator:reconcile'),
    approver: human && hasPermission(principal, 'agent:approve'),
  };
  const log = requestLog(req, api.logger);
  return {
    principal,
    viewer,
    flash,
    sessionId: id,
    session,
    async call(operationId, args) {
      const route = c.routes.find((r) => r.operationId === operationId);
      if (!route) throw new Error(`no operation ${operationId}`);
      const result = await callRoute(route, args, { db: api.db, principal, requestId: String(res.locals.requestId), log });
      return (result.body ?? {}) as Record<string, unknown>;
    },
    async say(f) {
      session.flash = f;
      await c.sessions.save(id, session);
    },
  };
}

/** What a refusal means to the person at the page. */
export function explain(err: Problem): string {
  if (err.code === 'version_conflict' || err.code === 'revision_conflict')
    return 'This changed since you loaded it. Nothing was changed: look at it again and decide.';
  if (err.code === 'csrf_failed') return err.detail;
  const issues = err.errors?.map((e) => `${e.path}: ${e.message}`).join('; ');
  return `${err.title}: ${err.detail}${issues ? ` (${issues})` : ''}`;
}

export function problemPage(res: Response, err: Problem, viewer: Viewer | null): void {
  const title = err.status === 404 ? 'Not found' : err.status === 403 ? 'Not allowed' : err.title;
  const body =
    err.status === 404
      ? '<p>There is nothing here for you: it does not exist, or it is not yours to see.</p>'
      : `<p>${explainHtml(err)}</p>`;
  res
    .status(err.status)
    .type('html')
    .send(layout(title, body, viewer));
}

const explainHtml = (err: Problem) => explain(err).replace(/[&<>"']/g, (ch) => `&#${ch.charCodeAt(0)};`);
