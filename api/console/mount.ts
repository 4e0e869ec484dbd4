import express, { type Express, type NextFunction, type Request, type Response } from 'express';
import { randomBytes } from 'node:crypto';
import { Problem } from '../../shared/errors';
import { consoleBaseOf } from '../../shared/config/config';
import { requireOps } from '../../shared/staff/ops-store';
import type { ApiDeps } from '../deps';
import type { RouteDef } from '../http/route';
import { DASHBOARD_PATH, DashboardSessions } from '../routes/queue-dashboard';
import { consoleRequest, problemPage, SignInRequired, type ConsoleDeps } from './context';
import { esc, layout } from './html';
import { approvalPages } from './pages/approvals';
import { campaignPages } from './pages/campaigns';
import { deliveryPages } from './pages/delivery';
import { billingPages } from './pages/billing';
import { fulfilmentPages } from './pages/fulfilment';
import { operatorPages } from './pages/operator';
import { preferencePages } from './pages/preferences';
import { queuePages } from './pages/queues';
import { rulePages } from './pages/rules';
import { backOf, registrars } from './routing';
import { ConsoleSessions } from './session';
import { ConsoleSignIn } from './sign-in';

const safeReturn = (v: unknown) => (typeof v === 'string' && /^\/console(\/|$|\?)/.test(v) && !v.startsWith('//') ? v : '/console');

/** The OpenID provider the console signs in with: the configured one, or the embedded development server. */
function signInOf(deps: ApiDeps): ConsoleSignIn | null {
  const { config } = deps;
  const issuer = config.CONSOLE_ISSUER ?? (deps.agentEndpoint?.devConsoleClientId ? deps.agentEndpoint.issuer : null);
  if (!issuer) return null;
  return new ConsoleSignIn({
    issuer,
    clientId: config.CONSOLE_CLIENT_ID,
    ...(config.CONSOLE_CLIENT_SECRET ? { clientSecret: config.CONSOLE_CLIENT_SECRET } : {}),
    redirectUri: `${consoleBaseOf(config)}/console/callback`,
    audience: config.AUTH_AUDIENCE,
    // Signing out of the console must let someone else sign in at the development login.
    forceLogin: !config.CONSOLE_ISSUER,
  });
}

/**
 * The staff and operator console at /console: server-rendered pages and plain forms over the
 * API's own operations (called in process), behind a server-side session.
 */
export function mountConsole(app: Express, deps: ApiDeps, routes: RouteDef[]): void {
  const { config } = deps;
  const sessions = new ConsoleSessions(deps.redis, deps.redisPrefix, config.NODE_ENV !== 'development');
  const c: ConsoleDeps = { api: deps, routes, sessions };
  const signIn = signInOf(deps);
  const base = new URL(consoleBaseOf(config));
  const router = express.Router({ caseSensitive: true, strict: true });
  // Only /console: the router is mounted at the root, in front of the API's unknown-route answer.
  router.use('/console', (req: Request, res: Response, next: NextFunction) => {
    res.locals.route = `${req.method} /console`;
    res.setHeader('x-frame-options', 'DENY');
    res.setHeader(
      'content-security-policy',
      "default-src 'none'; style-src 'unsafe-inline'; img-src 'self'; form-action 'self' " +
        base.origin +
        "; frame-ancestors 'none'; base-uri 'none'",
    );
    res.setHeader('referrer-policy', 'same-origin');
    next();
  });
  router.use('/console', express.urlencoded({ extended: false, limit: '64kb', parameterLimit: 50 }));

  router.get('/console/login', async (req, res, next) => {
    try {
      // The session cookie belongs to the host the provider sends people back to.
      if (req.get('host') !== base.host) {
        res.redirect(303, `${base.origin}/console/login`);
        return;
      }
      if (!signIn) {
        res
          .status(503)
          .type('html')
          .send(layout('Sign-in is not configured', '<p>Set CONSOLE_ISSUER (see docs/console.md).</p>', null));
        return;
      }
      if (req.query.go !== '1') {
        res
          .type('html')
          .send(
            layout(
              'Sign in',
              `<p>Staff, operators and approvers sign in with the organisation's identity provider.</p><p><a href="/console/login?go=1&amp;returnTo=${esc(encodeURIComponent(safeReturn(req.query.returnTo)))}">Sign in</a></p>`,
              null,
            ),
          );
        return;
      }
      const state = randomBytes(32).toString('base64url');
      const { url, codeVerifier } = await signIn.start(state);
      await sessions.beginSignIn(res, state, { codeVerifier, returnTo: safeReturn(req.query.returnTo) });
      res.redirect(303, url.href);
    } catch (err) {
      next(err);
    }
  });

  router.get('/console/callback', async (req, res, next) => {
    try {
      const state = typeof req.query.state === 'string' ? req.query.state : '';
      const code = typeof req.query.code === 'string' ? req.query.code : '';
      const pending = state ? await sessions.finishSignIn(req, res, state) : null;
      if (!pending || !code || !signIn) {
        res
          .status(400)
          .type('html')
          .send(
            layout(
              'Sign-in failed',
              '<p>This sign-in was not started here or has expired. <a href="/console/login">Sign in again</a>.</p>',
              null,
            ),
          );
        return;
      }
      const tokens = await signIn.finish(code, pending.codeVerifier).catch(() => null);
      if (!tokens) {
        res
          .status(400)
          .type('html')
          .send(
            layout('Sign-in failed', '<p>The identity provider refused the sign-in. <a href="/console/login">Try again</a>.</p>', null),
          );
        return;
      }
      // The token must be one the API itself accepts, or there is no session.
      await deps.verifier(tokens.accessToken);
      await sessions.create(res, tokens.accessToken, tokens.expiresIn);
      res.redirect(303, pending.returnTo);
    } catch (err) {
      if (err instanceof Problem && err.status === 401) {
        res
          .status(401)
          .type('html')
          .send(layout('Sign-in failed', '<p>The token is not accepted by this service.</p>', null));
        return;
      }
      next(err);
    }
  });

  router.post('/console/logout', async (req, res, next) => {
    try {
      const r = await consoleRequest(c, req, res);
      await sessions.destroy(res, r.sessionId, r.session);
      res.redirect(303, '/console/login');
    } catch (err) {
      if (err instanceof SignInRequired) res.redirect(303, '/console/login');
      else if (err instanceof Problem && err.status < 500) problemPage(res, err, null, backOf(req));
      else next(err);
    }
  });

  // The queue dashboard gets a session of its own, bound to this one: its cookie holds a random id, and signing out ends both.
  const dashboards = new DashboardSessions(deps.redis, deps.redisPrefix);
  router.post('/console/queues/dashboard', async (req, res, next) => {
    try {
      const r = await consoleRequest(c, req, res);
      await requireOps(deps.db, r.principal);
      const key = await dashboards.open(res, {
        accessToken: r.session.accessToken,
        boundTo: sessions.keyOf(r.sessionId),
        ttlSeconds: (r.session.expiresAt - Date.now()) / 1000,
        secure: config.NODE_ENV !== 'development',
      });
      r.session.linked = [...(r.session.linked ?? []), key].slice(-20);
      await sessions.save(r.sessionId, r.session);
      res.redirect(303, DASHBOARD_PATH);
    } catch (err) {
      if (err instanceof SignInRequired) res.redirect(303, '/console/login');
      else if (err instanceof Problem && err.status < 500) problemPage(res, err, null, backOf(req));
      else next(err);
    }
  });

  const reg = registrars(router, c);
  reg.get('/console', async (r, _req, res) => {
    const v = r.viewer;
    // Staff work the queue all day: they land on it, urgent work counted at its top.
    if (v.staff) {
      res.redirect(303, '/console/fulfilment');
      return;
    }
    const items = [
      v.staff ? '<li><a href="/console/fulfilment">Fulfilment queue</a>: bookings of your assigned clients.</li>' : '',
      v.reconciler ? '<li><a href="/console/operator">Operator</a>: uncertain outcomes, identity attempts, funding requests.</li>' : '',
      v.approver ? '<li><a href="/console/approvals">Agent approvals</a>: an agent\'s prepared actions waiting for a person.</li>' : '',
      v.staff ? '<li><a href="/console/queues">Queues</a>: supplier queue counts and failures, failing webhook subscriptions.</li>' : '',
      '<li><a href="/console/bookings">Campaigns</a>: pause, resume, stop and amend the budget of your workspace’s running campaigns.</li>',
      '<li><a href="/console/billing">Billing</a>: disputed invoices, restated final days and make-goods needing a person; sellers’ monthly statements.</li>',
      '<li><a href="/console/rules">Automatic rules</a>: each rule’s mode and mandate, its firings (marked where one waits for a person) and its dry runs.</li>',
    ].join('');
    res.type('html').send(layout('Console', `<ul>${items}</ul>`, v, r.flash));
  });
  for (const pages of [
    fulfilmentPages,
    operatorPages,
    approvalPages,
    campaignPages,
    queuePages,
    preferencePages,
    deliveryPages,
    billingPages,
    rulePages,
  ])
    pages(router, reg, c);
  // Anything else under /console is a page that does not exist, said as a page.
  router.use('/console', (_req: Request, res: Response) => {
    res
      .status(404)
      .type('html')
      .send(layout('Not found', '<p>There is no such page. <a href="/console">Back to the console</a>.</p>', null));
  });
  app.use(router);
}
