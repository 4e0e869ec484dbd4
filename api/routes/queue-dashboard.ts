import { bearerTokenOf } from '../middleware/authenticate';
import type { Express, NextFunction, Request, Response } from 'express';
import { createBullBoard } from '@bull-board/api';
import { BullMQAdapter } from '@bull-board/api/bullMQAdapter';
import { ExpressAdapter } from '@bull-board/express';
import { notFound } from '../../shared/errors';
import { requireOps } from '../../shared/staff/ops-store';
import { MAINTENANCE_QUEUE, jobQueues } from '../../shared/queues/names';
import type { ApiDeps } from '../deps';

export const DASHBOARD_PATH = '/admin/queues';
export const DASHBOARD_COOKIE = 'flightdeck_admin_token';
const COOKIE = DASHBOARD_COOKIE;

/** The token from the bearer header or the dashboard cookie; a cookie that does not decode is no token at all. */
function tokenOf(req: Request): string | undefined {
  const bearer = bearerTokenOf(req.headers.authorization);
  if (bearer) return bearer;
  const cookie = req.headers.cookie
    ?.split(';')
    .map((c) => c.trim())
    .find((c) => c.startsWith(`${COOKIE}=`));
  if (!cookie) return undefined;
  try {
    return decodeURIComponent(cookie.slice(COOKIE.length + 1));
  } catch {
    return undefined;
  }
}

/**
 * bull-board for ops: active members of the server-owned ops role only (staff membership is
 * not enough: the queues hold every tenant's work; job data is ids only, see shared/queues/jobs.ts).
 * A browser cannot send a bearer header, so `/admin/queues?access_token=…` moves the token into an HttpOnly cookie scoped to the
 * dashboard and redirects to a clean URL. Anyone else gets the same 404 as an unknown route.
 */
export function mountQueueDashboard(app: Express, deps: ApiDeps): void {
  const serverAdapter = new ExpressAdapter();
  serverAdapter.setBasePath(DASHBOARD_PATH);
  createBullBoard({
    // Supplier queues are read-only here: re-running a supplier mutation is reconciliation's job, not a button's.
    queues: jobQueues().map((name) => new BullMQAdapter(deps.producers.get(name), { readOnlyMode: name !== MAINTENANCE_QUEUE })),
    serverAdapter,
    options: { uiConfig: { boardTitle: 'Flightdeck queues' } },
  });

  const opsOnly = async (req: Request, res: Response, next: NextFunction) => {
    try {
      res.locals.route = `${req.method} ${DASHBOARD_PATH}`;
      const fromQuery = typeof req.query.access_token === 'string' ? req.query.access_token : undefined;
      const token = fromQuery ?? tokenOf(req);
      if (!token) throw notFound();
      const principal = await deps.verifier(token).catch(() => {
        throw notFound();
      });
      await requireOps(deps.db, principal);
      if (fromQuery) {
        res.setHeader(
          'set-cookie',
          `${COOKIE}=${encodeURIComponent(token)}; Path=${DASHBOARD_PATH}; HttpOnly; SameSite=Strict${req.secure ? '; Secure' : ''}`,
        );
        res.redirect(303, DASHBOARD_PATH);
        return;
      }
      next();
    } catch (err) {
      next(err);
    }
  };
  app.use(DASHBOARD_PATH, opsOnly, serverAdapter.getRouter());
}
