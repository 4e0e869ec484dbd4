import type { NextFunction, Request, Response, Router } from 'express';
import { Problem } from '../../shared/errors';
import { consoleRequest, explain, problemPage, SignInRequired, type ConsoleDeps, type ConsoleRequest } from './context';

type GetHandler = (r: ConsoleRequest, req: Request, res: Response) => Promise<void>;
/** A form's handler: what to tell the person, and which page to show next. */
type PostHandler = (r: ConsoleRequest, req: Request) => Promise<{ text: string; back: string }>;

export interface Registrars {
  get(path: string, h: GetHandler): void;
  post(path: string, h: PostHandler): void;
}

export type PageRegistrar = (router: Router, r: Registrars, c: ConsoleDeps) => void;

/** Form numbers arrive as text; anything not a plain integer goes through as is, for the schema to refuse. */
export const formInt = (v: unknown) => (typeof v === 'string' && /^\d{1,15}$/.test(v) ? Number(v) : v);

/** Where the form came from (same origin only): a refusal is shown there, over the page as it now is. */
function backOf(req: Request): string {
  const referer = req.get('referer');
  if (!referer) return '/console';
  try {
    const u = new URL(referer);
    return u.host === req.get('host') && u.pathname.startsWith('/console') ? `${u.pathname}${u.search}` : '/console';
  } catch {
    return '/console';
  }
}

export function registrars(router: Router, c: ConsoleDeps): Registrars {
  const signIn = (req: Request, res: Response) =>
    res.redirect(303, `/console/login?returnTo=${encodeURIComponent(req.method === 'GET' ? req.originalUrl : '/console')}`);
  return {
    get(path, h) {
      router.get(path, async (req: Request, res: Response, next: NextFunction) => {
        let r: ConsoleRequest | undefined;
        try {
          r = await consoleRequest(c, req, res);
          res.setHeader('cache-control', 'no-store');
          await h(r, req, res);
        } catch (err) {
          if (err instanceof SignInRequired) signIn(req, res);
          else if (err instanceof Problem && err.status < 500) problemPage(res, err, r?.viewer ?? null);
          else next(err);
        }
      });
    },
    post(path, h) {
      router.post(path, async (req: Request, res: Response, next: NextFunction) => {
        let r: ConsoleRequest | undefined;
        try {
          r = await consoleRequest(c, req, res);
          const done = await h(r, req);
          await r.say({ kind: 'ok', text: done.text });
          res.redirect(303, done.back);
        } catch (err) {
          if (err instanceof SignInRequired) signIn(req, res);
          else if (err instanceof Problem && r && [400, 409, 422].includes(err.status)) {
            // Refused: nothing changed. Say why over the page as it is now.
            await r.say({ kind: 'error', text: explain(err) });
            res.redirect(303, backOf(req));
          } else if (err instanceof Problem && err.status < 500) problemPage(res, err, r?.viewer ?? null);
          else next(err);
        }
      });
    },
  };
}
