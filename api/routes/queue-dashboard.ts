import { createHash, randomBytes } from 'node:crypto';
import { decodeJwt } from 'jose';
import type { RedisClient } from '../../shared/redis';
import { bearerTokenOf } from '../middleware/authenticate';
import { readCookie } from '../http/cookies';
import type { Express, NextFunction, Request, Response } from 'express';
import { createBullBoard } from '@bull-board/api';
import { BullMQAdapter } from '@bull-board/api/bullMQAdapter';
import { ExpressAdapter } from '@bull-board/express';
import { notFound } from '../../shared/errors';
import { requireOps } from '../../shared/staff/ops-store';
import { MAINTENANCE_QUEUE, jobQueues } from '../../shared/queues/names';
import type { ApiDeps } from '../deps';

export const DASHBOARD_PATH = '/admin/queues';
/** Holds a random dashboard session id, never a token. */
export const DASHBOARD_COOKIE = 'fd_dashboard';
const SESSION_ID = /^[A-Za-z0-9_-]{40,64}$/;
// A dashboard session opened from a token lasts no longer than the token, nor than a working day.
const MAX_SESSION_SECONDS = 12 * 60 * 60;

interface DashboardSession {
  /** The access token every dashboard request is decided from (verified, and its user checked for ops, each time). */
  accessToken: string;
  /** A Redis key this session lives and dies with: the console session it was opened from. */
  boundTo?: string;
}

/**
 * Dashboard sessions in Redis. bull-board can write (the maintenance queue), and a browser
 * cannot send a bearer header, so the dashboard's cookie holds a random id (HttpOnly,
 * SameSite=Strict, scoped to the dashboard); Redis keys the session by the id's hash.
 */
export class DashboardSessions {
  constructor(
    private readonly redis: RedisClient,
    private readonly prefix: string,
  ) {}

  keyOf = (id: string) => `${this.prefix}:dashboard:session:${createHash('sha256').update(id).digest('hex')}`;

  /** Opens a session and sets its cookie; answers its Redis key, for whoever must end it. */
  async open(res: Response, s: DashboardSession & { ttlSeconds: number; secure: boolean }): Promise<string> {
    const id = randomBytes(32).toString('base64url');
    const ttl = Math.max(1, Math.min(MAX_SESSION_SECONDS, Math.floor(s.ttlSeconds)));
    const key = this.keyOf(id);
    const session: DashboardSession = { accessToken: s.accessToken, ...(s.boundTo ? { boundTo: s.boundTo } : {}) };
    await this.redis.set(key, JSON.stringify(session), 'EX', ttl);
    res.append(
      'set-cookie',
      `${DASHBOARD_COOKIE}=${id}; Path=${DASHBOARD_PATH}; HttpOnly; SameSite=Strict; Max-Age=${ttl}${s.secure ? '; Secure' : ''}`,
    );
    return key;
  }

  /** The token of the request's dashboard session, or undefined: unknown, expired, or its console session ended. */
  async tokenOf(req: Request): Promise<string | undefined> {
    const id = readCookie(req, DASHBOARD_COOKIE);
    if (!id || !SESSION_ID.test(id)) return undefined;
    const key = this.keyOf(id);
    const raw = await this.redis.get(key);
    if (!raw) return undefined;
    const session = JSON.parse(raw) as DashboardSession;
    if (session.boundTo && !(await this.redis.exists(session.boundTo))) {
      await this.redis.del(key);
      return undefined;
    }
    return session.accessToken;
  }
}

/** Seconds until the (verified) token expires. */
const secondsLeft = (token: string) => (decodeJwt(token).exp ?? 0) - Math.floor(Date.now() / 1000);

/**
 * bull-board for ops: active members of the server-owned ops role only (staff membership is
 * not enough: the queues hold every tenant's work; job data is ids only, see shared/queues/jobs.ts).
 * A bearer header, or a dashboard session: opened by the console's button, or once by
 * `/admin/queues?access_token=…`, which redirects to the clean URL. Every request is decided
 * again from the session's token. Anyone else gets the same 404 as an unknown route.
 */
export function mountQueueDashboard(app: Express, deps: ApiDeps): void {
  const sessions = new DashboardSessions(deps.redis, deps.redisPrefix);
  const serverAdapter = new ExpressAdapter();
  serverAdapter.setBasePath(DASHBOARD_PATH);
  createBullBoard({
    // Supplier queues are read-only here: re-running a supplier mutation is reconciliation's job, not a button's.
    queues: jobQueues().map((name) => new BullMQAdapter(deps.queueReads.get(name), { readOnlyMode: name !== MAINTENANCE_QUEUE })),
    serverAdapter,
    options: { uiConfig: { boardTitle: 'Flightdeck queues' } },
  });

  const opsOnly = async (req: Request, res: Response, next: NextFunction) => {
    try {
      res.locals.route = `${req.method} ${DASHBOARD_PATH}`;
      const fromQuery = typeof req.query.access_token === 'string' ? req.query.access_token : undefined;
      const token = fromQuery ?? bearerTokenOf(req.headers.authorization) ?? (await sessions.tokenOf(req));
      if (!token) throw notFound();
      const principal = await deps.verifier(token).catch(() => {
        throw notFound();
      });
      await requireOps(deps.db, principal);
      if (fromQuery) {
        await sessions.open(res, { accessToken: token, ttlSeconds: secondsLeft(token), secure: req.secure });
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
