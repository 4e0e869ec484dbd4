import type { Knex } from 'knex';
import { badRequest, conflict, notFound, type ProblemIssue } from '../../../shared/errors';
import { amendable, type Amendment } from '../../../shared/bookings/amendments';
import { spendFigures } from '../../../shared/bookings/spend-figures';
import type { Booking } from '../../../shared/bookings/booking-schemas';
import type { LineRow } from '../../../shared/bookings/booking-store';
import { allowedControls, CONTROLS, type Control } from '../../../shared/bookings/lines/control';
import { pendingOperationsOf } from '../../../shared/bookings/lines/operation-store';
import type { ConsoleRequest } from '../context';
import { draftOf } from '../forms';
import { esc, layout } from '../html';
import { formInt, type FormAbout, type PageRegistrar } from '../routing';
import { at } from '../time';
import { lineNames, statusBadge } from '../views/lines';
import {
  backToCampaignLine,
  campaignControlWords,
  campaignLinePath,
  campaignPath,
  inFlightPage,
  stopConfirmation,
} from '../views/in-flight';
import { workspaceBookings } from '../views/workspace-bookings';

/** The booking as the API shows this person (their workspace and product; 404 otherwise). */
async function visible(r: ConsoleRequest, id: string): Promise<Booking> {
  return ((await r.call('getBooking', { id })) as { booking: Booking }).booking;
}

async function inFlightOf(r: ConsoleRequest, db: Knex, booking: Booking) {
  const rows = (await db('booking_lines').where({ booking_id: booking.id })) as LineRow[];
  const { amendments } = (await r.call('listAmendments', { id: booking.campaignId })) as { amendments: Amendment[] };
  return {
    booking,
    controls: new Map(rows.map((l) => [l.id, allowedControls(l)])),
    amendRefusals: new Map(rows.map((l) => [l.id, amendable(l)])),
    pending: await pendingOperationsOf(db, booking.id),
    amendments: amendments.filter((a) => a.bookingId === booking.id),
  };
}

const controlOf = (op: string): Control => {
  if (!(CONTROLS as readonly string[]).includes(op)) throw notFound();
  return op as Control;
};

/** A budget typed in pounds and pence ("1250" or "1250.50"), in minor units; null when it is not one. */
function minorOf(typed: string): number | null {
  const m = /^\s*(\d{1,13})(?:\.(\d{1,2}))?\s*$/.exec(typed);
  return m ? Number(m[1]) * 100 + Number((m[2] ?? '').padEnd(2, '0')) : null;
}

/** The amendment a form asks for: the lines whose budget was changed from what the page showed, and the end date if one was typed. */
function amendmentOf(b: Booking, form: Record<string, string>, names: Map<string, string>) {
  const lines: Array<{ lineId: string; budgetMinor: number }> = [];
  const invalid: ProblemIssue[] = [];
  for (const l of b.lines) {
    const typed = form[`budget-${l.id}`];
    if (typed === undefined) continue;
    const minor = minorOf(typed);
    if (minor === null)
      invalid.push({ path: `budget-${l.id}`, code: 'custom', message: `${names.get(l.id)} budget: an amount in pounds, like 1250.00` });
    else if (minor !== l.budgetMinor) lines.push({ lineId: l.id, budgetMinor: minor });
  }
  if (invalid.length) throw badRequest('A budget is not an amount.', invalid, 'invalid_budget');
  return {
    id: b.campaignId,
    expectedVersion: formInt(form.expectedVersion),
    lines,
    ...(form.endDate ? { endDate: form.endDate } : {}),
    ...(form.note ? { note: form.note } : {}),
  };
}

/** A stop asks to be confirmed on a page of its own first: it cannot be undone. */
function confirmStop(
  r: ConsoleRequest,
  b: Booking,
  action: string,
  form: Record<string, string>,
  kept: string[],
  line?: Booking['lines'][number],
) {
  const fields = Object.fromEntries(kept.flatMap((f) => (form[f] ? [[f, form[f]]] : [])));
  return { page: stopConfirmation(r, b, action, fields, line), draft: draftOf(action, fields) };
}

export const campaignPages: PageRegistrar = (_router, { get, post }, c) => {
  const { db } = c.api;

  get('/console/bookings', async (r, _req, res) => {
    const rows = await workspaceBookings(r, db);
    const zone = r.viewer.timeZone;
    const table = rows.length
      ? `<table aria-labelledby="campaigns-heading"><thead><tr><th scope="col">Campaign</th><th scope="col">Client</th>
<th scope="col">Status</th><th scope="col">Submitted</th></tr></thead><tbody>${rows
          .map(
            (b) => `<tr><td><a href="${campaignPath(esc(b.id))}">${esc(b.campaign_name)}</a> <code>${esc(b.id.slice(0, 8))}</code></td>
<td>${esc(b.client_name)}</td><td>${statusBadge(b.status)}</td><td>${at(b.submitted_at.toISOString(), zone)}</td></tr>`,
          )
          .join('')}</tbody></table>`
      : '<p>No bookings yet.</p>';
    res.type('html').send(layout('Campaigns', `<h2 id="campaigns-heading">Your workspace’s bookings</h2>${table}`, r.viewer, r.flash));
  });

  get('/console/bookings/:id', async (r, req, res) => {
    const booking = await visible(r, String(req.params.id));
    res.type('html').send(inFlightPage(r, await inFlightOf(r, db, booking)));
  });

  post('/console/bookings/:id/amend', async (r, req, about) => {
    const booking = await visible(r, String(req.params.id));
    const form = req.body as Record<string, string>;
    about.subject = 'The amendment';
    about.back = `${campaignPath(booking.id)}#amend-heading`;
    const asked = amendmentOf(booking, form, lineNames(booking));
    // A cut is judged against the latest spend figures; when they are behind, the person confirms first.
    const cuts = asked.lines.some((l) => l.budgetMinor < (booking.lines.find((x) => x.id === l.lineId)?.budgetMinor ?? 0));
    if (cuts && form.confirmStale !== 'yes') {
      const figures = await spendFigures(db, booking.lines, c.api.config.DELIVERY_POLL_EVERY_MS);
      if (figures.stale) {
        throw conflict(
          `${figures.warning} To cut the budget anyway, tick “Cut even if the spend figures are behind” and amend again.`,
          'stale_figures_unconfirmed',
        );
      }
    }
    const { amendment } = (await r.call('amendCampaign', asked)) as { amendment: Amendment };
    const n = amendment.lines.length;
    return { text: `Amendment asked of ${n} line${n === 1 ? '' : 's'}: it is ${amendment.status}.`, back: about.back };
  });

  post('/console/bookings/:id/lines/:lineId/:op', async (r, req, about: FormAbout) => {
    const control = controlOf(String(req.params.op));
    const booking = await visible(r, String(req.params.id));
    const line = booking.lines.find((l) => l.id === String(req.params.lineId).toLowerCase());
    if (!line) throw notFound();
    const name = lineNames(booking).get(line.id)!;
    about.subject = name;
    about.back = backToCampaignLine(booking.id, line.id);
    const form = req.body as Record<string, string>;
    const args = {
      bookingId: booking.id,
      lineId: line.id,
      expectedVersion: formInt(form.expectedVersion),
      ...(form.note ? { note: form.note } : {}),
    };
    if (control === 'stop' && form.confirmed !== 'yes') {
      // Checked now, so that a form the operation would refuse is not first asked to be confirmed.
      r.check('stopLine', args);
      return confirmStop(r, booking, `${campaignLinePath(booking.id, line.id)}/stop`, form, ['expectedVersion', 'note'], line);
    }
    await r.call(`${control}Line`, args);
    return { text: `${name}: ${control} asked of its supplier.`, back: about.back };
  });

  post('/console/bookings/:id/:op', async (r, req, about) => {
    const control = controlOf(String(req.params.op));
    const booking = await visible(r, String(req.params.id));
    about.subject = `The campaign ${booking.campaignName}`;
    about.back = campaignPath(booking.id);
    const form = req.body as Record<string, string>;
    const args = { id: booking.campaignId, ...(form.note ? { note: form.note } : {}) };
    if (control === 'stop' && form.confirmed !== 'yes') {
      r.check('stopCampaign', args);
      return confirmStop(r, booking, `${campaignPath(booking.id)}/stop`, form, ['note']);
    }
    const result = (await r.call(`${control}Campaign`, args)) as {
      requested: string[];
      skipped: Array<{ lineId: string; reason: string }>;
    };
    return { text: campaignControlWords(booking, control, result), back: about.back };
  });
};
