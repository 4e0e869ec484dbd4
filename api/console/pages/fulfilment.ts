import type { Router } from 'express';
import type { Knex } from 'knex';
import { notFound } from '../../../shared/errors';
import { requireAssigned, requireStaff } from '../../../shared/staff/staff-access';
import type { StaffCache } from '../../../shared/staff/staff-cache';
import { findBookingById } from '../../../shared/bookings/booking-store';
import { listNeedingAttention } from '../../../shared/bookings/fulfilment-queue';
import { pendingOperationsOf } from '../../../shared/bookings/lines/operation-store';
import { listBookingBrowserJobs } from '../../../shared/bookings/browser-jobs';
import type { Booking } from '../../../shared/bookings/booking-schemas';
import { uuidOr404 } from '../../http/params';
import type { ConsoleRequest } from '../context';
import { draftOf } from '../forms';
import { formInt, type PageRegistrar } from '../routing';
import { lineNames } from '../views/lines';
import { FILTERS, queuePage } from '../views/queue';
import { backToLine, bookingPage, bookingPath, changeInDoubt, operationWords, rejectConfirmation } from '../views/staff-booking';

/** Staff see a booking as the staff routes decide: active staff, assigned to its client; anything else is not found. */
async function staffBooking(r: ConsoleRequest, db: Knex, staffCache: StaffCache, id: string): Promise<Booking> {
  const staff = await requireStaff(staffCache, r.principal);
  const booking = await findBookingById(db, uuidOr404(id));
  if (!booking) throw notFound();
  requireAssigned(staff, booking.advertiserId);
  return booking;
}

/** Browser jobs cited as evidence: checkboxes (one value each), or the comma-joined list a confirmation step carries. */
const CITED = 'browserJobIds';
const citedOf = (v: unknown): string[] =>
  [v]
    .flat()
    .flatMap((x) => (typeof x === 'string' ? x.split(',') : []))
    .filter(Boolean);

/** Each line operation: the API's operation, the fields its form sends, and what the person is told when it is done. */
const LINE_OPS: Record<
  string,
  { operationId: string; fields: string[]; done: (form: Record<string, string>, what: string) => string; unversioned?: boolean }
> = {
  delivery: { operationId: 'fulfilmentDeliveryLine', fields: ['csv'], done: () => 'delivery entered.', unversioned: true },
  claim: { operationId: 'fulfilmentClaimLine', fields: [], done: () => 'claimed: it is yours to work.' },
  start: { operationId: 'fulfilmentStartLine', fields: [], done: () => 'started: its managed-booking attempt is open.' },
  confirm: { operationId: 'fulfilmentConfirmLine', fields: ['providerReference', 'evidence', CITED], done: () => 'confirmed.' },
  reject: { operationId: 'fulfilmentRejectLine', fields: ['evidence', CITED], done: () => 'rejected.' },
  uncertain: { operationId: 'fulfilmentUncertainLine', fields: ['evidence'], done: () => 'marked uncertain: it now needs reconciliation.' },
  'follow-up': {
    operationId: 'fulfilmentFollowUpLine',
    fields: ['operationId', 'evidence'],
    done: () => 'follow-up recorded done.',
    unversioned: true,
  },
  resolve: {
    operationId: 'fulfilmentResolveLine',
    fields: ['outcome', 'providerReference', 'evidence', CITED],
    done: (f, what) =>
      what === 'booking'
        ? f.outcome === 'not-applied'
          ? 'resolved as not applied: rejected.'
          : 'resolved as applied: confirmed.'
        : `resolved as ${f.outcome === 'not-applied' ? 'not applied: the' : 'applied: the'} ${what} ${f.outcome === 'not-applied' ? 'did not happen' : 'happened'}.`,
  },
};

/**
 * An action after which the line is rejected for good: it asks to be confirmed on a page of its
 * own first. Only a booking's refusal is final; a change's refusal leaves the line as it was.
 */
const rejects = (op: string, form: Record<string, string>, line: Booking['lines'][number]) =>
  operationWords(changeInDoubt(line)) === 'booking' && (op === 'reject' || (op === 'resolve' && form.outcome === 'not-applied'));

export const fulfilmentPages: PageRegistrar = (_router: Router, { get, post }, c) => {
  const { db, staff: staffCache } = c.api;
  get('/console/fulfilment', async (r, req, res) => {
    const query = Object.fromEntries(
      FILTERS.flatMap((k) => (typeof req.query[k] === 'string' && req.query[k] !== '' ? [[k, req.query[k] as string]] : [])),
    );
    const args: Record<string, unknown> = { ...query };
    if (query.limit) args.limit = formInt(query.limit);
    const page = await r.call('listFulfilmentBookings', args);
    // The queue call above has already refused anyone who is not staff.
    const attention = await listNeedingAttention(db, await requireStaff(staffCache, r.principal));
    res.type('html').send(queuePage(r, query, page as unknown as { bookings: Booking[]; nextCursor: string | null }, attention));
  });

  get('/console/fulfilment/bookings/:id', async (r, req, res) => {
    const booking = await staffBooking(r, db, staffCache, String(req.params.id));
    const jobs = await listBookingBrowserJobs(db, booking.id, 20);
    res.type('html').send(bookingPage(r, booking, jobs, await pendingOperationsOf(db, booking.id)));
  });

  post('/console/fulfilment/bookings/:bookingId/lines/:lineId/:op', async (r, req, about) => {
    const op = LINE_OPS[String(req.params.op)];
    if (!op) throw notFound();
    const booking = await staffBooking(r, db, staffCache, String(req.params.bookingId));
    const line = booking.lines.find((l) => l.id === String(req.params.lineId).toLowerCase());
    if (!line) throw notFound();
    const name = lineNames(booking).get(line.id)!;
    about.subject = name;
    about.back = backToLine(booking.id, line.id);
    const form = req.body as Record<string, string>;
    const args: Record<string, unknown> = { bookingId: booking.id, lineId: line.id };
    if (!op.unversioned) args.expectedVersion = formInt(form.expectedVersion);
    for (const f of op.fields) if (form[f]) args[f] = f === CITED ? citedOf(form[f]) : form[f];
    if (rejects(String(req.params.op), form, line) && form.confirmed !== 'yes') {
      // Checked now, so that a form the operation would refuse is not first asked to be confirmed.
      r.check(op.operationId, args);
      const kept = Object.fromEntries(
        ['expectedVersion', ...op.fields].flatMap((f) => (form[f] ? [[f, f === CITED ? citedOf(form[f]).join(',') : form[f]]] : [])),
      );
      return {
        page: rejectConfirmation(r, booking, line, String(req.params.op), kept),
        draft: draftOf(`${bookingPath(booking.id)}/lines/${line.id}/${String(req.params.op)}`, kept),
      };
    }
    await r.call(op.operationId, args);
    return { text: `${name} ${op.done(form, operationWords(changeInDoubt(line)))}`, back: about.back };
  });

  post('/console/fulfilment/bookings/:id/browser-jobs', async (r, req, about) => {
    const booking = await staffBooking(r, db, staffCache, String(req.params.id));
    about.subject = 'Browser job';
    about.back = `${bookingPath(booking.id)}#bj-line`;
    const form = req.body as Record<string, string>;
    const { browserJob } = (await r.call('recordBrowserJob', {
      advertiserId: booking.advertiserId,
      campaignId: booking.campaignId,
      channelCampaignId: form.channelCampaignId,
      purpose: form.purpose,
      supplierUrl: form.supplierUrl,
      expectedSnapshotDigest: form.expectedSnapshotDigest,
      readOnlyConfirmed: form.readOnlyConfirmed === 'true',
    })) as { browserJob: { id: string } };
    const line = booking.lines.find((l) => l.channelCampaignId === form.channelCampaignId);
    return {
      text: `Queued browser job ${browserJob.id}${line ? ` on ${lineNames(booking).get(line.id)}` : ''}: it opens the page read-only and brings back evidence, shown here when it is done.`,
      back: `${bookingPath(booking.id)}#browser-job-${browserJob.id}`,
    };
  });
};
