import type { Request, Response } from 'express';
import { Problem } from '../../../shared/errors';
import { consoleRequest, problemPage, SignInRequired } from '../context';
import { FormFill } from '../forms';
import { esc, layout, postForm } from '../html';
import { backOf, type PageRegistrar } from '../routing';
import { at, TIME_ZONE_COOKIE, TIME_ZONES } from '../time';

const YEAR = 365 * 24 * 60 * 60;

/**
 * The zone times are shown in. The console runs no script, so it cannot learn the browser's
 * zone: the person says it once, and a cookie (scoped to the console) keeps it across sign-ins.
 */
export const preferencePages: PageRegistrar = (router, { get }, c) => {
  get('/console/preferences', async (r, _req, res) => {
    const f = new FormFill(null, '/console/preferences');
    const form = postForm(
      r.viewer,
      f.action,
      {},
      `${f.select({
        id: 'tz',
        name: 'timeZone',
        label: 'Time zone',
        required: true,
        initial: r.viewer.timeZone,
        options: TIME_ZONES.map((z) => [z, z]),
      })}
<button type="submit">Show times in this zone</button>`,
    );
    const now = new Date().toISOString();
    res
      .type('html')
      .send(
        layout(
          'Preferences',
          `<p>Times are shown in <strong data-time-zone>${esc(r.viewer.timeZone)}</strong>: now is ${at(now, r.viewer.timeZone)}.</p>${form}`,
          r.viewer,
          r.flash,
        ),
      );
  });

  router.post('/console/preferences', async (req: Request, res: Response, next) => {
    try {
      const r = await consoleRequest(c, req, res);
      const zone = typeof req.body?.timeZone === 'string' ? req.body.timeZone : '';
      if (!TIME_ZONES.includes(zone)) {
        await r.say({ kind: 'error', text: 'Time zone: choose one from the list. Nothing was changed.' });
        res.redirect(303, '/console/preferences');
        return;
      }
      const secure = c.api.config.NODE_ENV !== 'development' ? '; Secure' : '';
      res.append(
        'set-cookie',
        `${TIME_ZONE_COOKIE}=${encodeURIComponent(zone)}; Path=/console; HttpOnly; SameSite=Lax; Max-Age=${YEAR}${secure}`,
      );
      await r.say({ kind: 'ok', text: `Times are now shown in ${zone}.` });
      res.redirect(303, '/console/preferences');
    } catch (err) {
      if (err instanceof SignInRequired) res.redirect(303, '/console/login');
      else if (err instanceof Problem && err.status < 500) problemPage(res, err, null, backOf(req));
      else next(err);
    }
  });
};
