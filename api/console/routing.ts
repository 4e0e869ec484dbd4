import type { NextFunction, Request, Response, Router } from 'express';
import { Problem } from '../../shared/errors';
import { consoleRequest, problemPage, SignInRequired, type ConsoleDeps, type ConsoleRequest } from './context';
import { draftOf, type Draft } from './forms';
import { fieldOf, refusalInWords } from './words';

type GetHandler = (r: ConsoleRequest, req: Request, res: Response) => Promise<void>;

/** What a form is about, said by its handler before it acts: a refusal names it and returns to it. */
export interface FormAbout {
  /** As the page heads it ("Line 2 · ctv · manual"). */
  subject?: string;
  /** The page (and place on it) to return to. */
  back?: string;
}

/** A form's handler: what to tell the person and which page to show next, or a page to show now (a confirmation step). */
type PostHandler = (
  r: ConsoleRequest,
  req: Request,
  about: FormAbout,
) => Promise<{ text: string; back: string } | { page: string; draft?: Draft }>;

export interface Registrars {
  get(path: string, h: GetHandler): void;
  post(path: string, h: PostHandler): void;
}

export type PageRegistrar = (router: Router, r: Registrars, c: ConsoleDeps) => void;

/** Form numbers arrive as text; anything not a plain integer goes through as is, for the schema to refuse. */
export const formInt = (v: unknown) => (typeof v === 'string' && /^\d{1,15}$/.test(v) ? Number(v) : v);

/** Where the form came from (same origin only): a refusal is shown there, over the page as it now is. */
export function backOf(req: Request): string {
  const referer = req.get('referer');
  if (!referer) return '/console';
  try {
    const u = new URL(referer);
    return u.host === req.get('host') && u.pathname.startsWith('/console') ? `${u.pathname}${u.search}` : '/console';
  } catch {
    return '/console';
  }
}

/** The form's own action, as the page rendered it: the draft fills that form again. */
const actionOf = (req: Request) => req.originalUrl.split('?')[0]!;

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
        const about: FormAbout = {};
        try {
          r = await consoleRequest(c, req, res);
          const done = await h(r, req, about);
          if ('page' in done) {
            await r.say(null, done.draft);
            res.setHeader('cache-control', 'no-store');
            res.type('html').send(done.page);
            return;
          }
          await r.say({ kind: 'ok', text: done.text });
          res.redirect(303, done.back);
        } catch (err) {
          if (err instanceof SignInRequired) signIn(req, res);
          else if (err instanceof Problem && r && [400, 409, 422].includes(err.status)) {
            // Refused: nothing changed. Say why, once, over the page as it is now, with what was typed still in its form.
            const invalid = (err.errors ?? []).map(fieldOf);
            await r.say({ kind: 'error', text: refusalInWords(err, about.subject) }, draftOf(actionOf(req), req.body, invalid));
            res.redirect(303, about.back ?? backOf(req));
          } else if (err instanceof Problem && err.status < 500) problemPage(res, err, r?.viewer ?? null, backOf(req));
          else next(err);
        }
      });
    },
  };
}
