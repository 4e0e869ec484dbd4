import type { Router } from 'express';
import { notFound } from '../../../shared/errors';
import { requireAssigned, requireStaff } from '../../../shared/staff/staff-access';
import type { StaffCache } from '../../../shared/staff/staff-cache';
import { findBookingById } from '../../../shared/bookings/booking-store';
import { listNeedingAttention } from '../../../shared/bookings/fulfilment-queue';
import type { Booking } from '../../../shared/bookings/booking-schemas';
import { canMove, type LineStatus } from '../../../shared/bookings/line-state';
import { uuidOr404 } from '../../http/params';
import type { ConsoleRequest } from '../context';
import { esc, json, layout, money, postForm, type Viewer } from '../html';
import { formInt, type PageRegistrar } from '../routing';

type Line = Booking['lines'][number];
const FILTERS = ['status', 'assignee', 'advertiserId', 'adapterKey', 'overdue', 'limit', 'cursor'] as const;
const needsAttention = (b: Booking) => b.overdue || b.lines.some((l) => l.status === 'reconciliation-required');

function queuePage(
  r: ConsoleRequest,
  query: Record<string, string>,
  page: { bookings: Booking[]; nextCursor: string | null },
  attention: Booking[],
) {
  // Within the page the queue's own order holds, except that what needs a person now comes first.
  const rows = [...page.bookings].sort((a, b) => Number(needsAttention(b)) - Number(needsAttention(a)));
  const select = (name: string, label: string, options: string[]) =>
    `<label>${label} <select name="${name}">${options
      .map((o) => `<option value="${esc(o)}"${query[name] === o ? ' selected' : ''}>${esc(o || 'any')}</option>`)
      .join('')}</select></label>`;
  const filters = `<form method="get" action="/console/fulfilment"><fieldset><legend>Filters</legend>
${select('status', 'Status', ['active', 'all'])}${select('assignee', 'Assignee', ['all', 'me', 'unassigned'])}
${select('overdue', 'Overdue', ['', 'true', 'false'])}
<label>Client (advertiser id) <input name="advertiserId" value="${esc(query.advertiserId)}" maxlength="200"></label>
<label>Supplier adapter <input name="adapterKey" value="${esc(query.adapterKey)}" maxlength="200"></label>
<label>Per page <input name="limit" type="number" min="1" max="100" value="${esc(query.limit ?? '50')}"></label>
<button type="submit">Apply</button></fieldset></form>`;
  const table = rows.length
    ? `<table><caption class="skip">Bookings</caption><thead><tr><th scope="col">Booking</th><th scope="col">Client</th><th scope="col">Campaign</th>
<th scope="col">Status</th><th scope="col">Lines</th><th scope="col">Due</th></tr></thead><tbody>${rows
        .map(
          (
            b,
          ) => `<tr${needsAttention(b) ? ' class="attention"' : ''}><td><a href="/console/fulfilment/bookings/${esc(b.id)}">${esc(b.id.slice(0, 8))}</a>
${needsAttention(b) ? '<span class="badge warn">needs attention</span>' : ''}</td><td>${esc(b.client.name)} <code>${esc(b.advertiserId)}</code></td>
<td>${esc(b.campaignName)}</td><td>${esc(b.status)}</td><td>${b.lines.map((l) => `<span class="badge">${esc(l.adapterKey)}: ${esc(l.status)}</span>`).join(' ')}</td>
<td>${esc(b.confirmationDueAt)}${b.overdue ? ' <span class="badge warn">overdue</span>' : ''}</td></tr>`,
        )
        .join('')}</tbody></table>`
    : '<p>No bookings match.</p>';
  const next = page.nextCursor
    ? `<p><a href="/console/fulfilment?${new URLSearchParams({ ...query, cursor: page.nextCursor }).toString()}">Next page</a></p>`
    : '';
  // Across every page: what needs a person now, so nothing urgent waits on a later page.
  const urgent = attention.length
    ? `<section aria-labelledby="attention-heading"><h2 id="attention-heading">Needs attention now</h2><ul>${attention
        .map(
          (b) =>
            `<li><a href="/console/fulfilment/bookings/${esc(b.id)}">${esc(b.id.slice(0, 8))}</a> ${esc(b.client.name)}, ${esc(b.campaignName)}: ` +
            `${b.lines.filter((l) => l.status === 'reconciliation-required').length} line(s) to reconcile${b.overdue ? ', overdue' : ''}</li>`,
        )
        .join('')}</ul></section>`
    : '';
  return layout('Fulfilment queue', urgent + filters + table + next, r.viewer, r.flash);
}

/** The actions a line offers now; the domain decides again when one is sent, with the version shown here. */
function lineActions(v: Viewer, b: Booking, l: Line): string {
  const base = `/console/fulfilment/bookings/${b.id}/lines/${l.id}`;
  const status = l.status as LineStatus;
  const hidden = { expectedVersion: l.version };
  const mine = l.claimedBy === v.userId;
  const evidence = (id: string) =>
    `<label for="${id}">Evidence</label><textarea id="${id}" name="evidence" required minlength="10" maxlength="20000"></textarea>`;
  const ref = (id: string, required: boolean) =>
    `<label for="${id}">Provider reference</label><input id="${id}" name="providerReference"${required ? ' required' : ''} maxlength="200">`;
  const out: string[] = [];
  const workflow = l.executionMethod !== null;
  if (workflow && ['queued', 'in-progress', 'reconciliation-required'].includes(status) && !mine && !l.claimedBy)
    out.push(postForm(v, `${base}/claim`, hidden, '<button type="submit">Claim</button>', 'inline'));
  if (workflow && mine && status === 'queued' && canMove(status, 'in-progress'))
    out.push(postForm(v, `${base}/start`, hidden, '<button type="submit">Start</button>', 'inline'));
  if (workflow && mine && status === 'in-progress')
    out.push(
      postForm(
        v,
        `${base}/confirm`,
        hidden,
        `<fieldset><legend>Confirm</legend>${ref(`cr-${l.id}`, true)}${evidence(`ce-${l.id}`)}<button type="submit">Confirm</button></fieldset>`,
      ),
    );
  if (workflow && mine && canMove(status, 'rejected') && status !== 'reconciliation-required')
    out.push(
      postForm(
        v,
        `${base}/reject`,
        hidden,
        `<fieldset><legend>Reject</legend>${evidence(`re-${l.id}`)}<button type="submit">Reject</button></fieldset>`,
      ),
    );
  if (canMove(status, 'reconciliation-required'))
    out.push(
      postForm(
        v,
        `${base}/uncertain`,
        hidden,
        `<fieldset><legend>Outcome uncertain</legend>${evidence(`ue-${l.id}`)}<button type="submit">Mark uncertain</button></fieldset>`,
      ),
    );
  if (status === 'reconciliation-required')
    out.push(
      postForm(
        v,
        `${base}/resolve`,
        hidden,
        `<fieldset><legend>Resolve from evidence</legend><label for="ro-${l.id}">Outcome</label>
<select id="ro-${l.id}" name="outcome"><option value="applied">applied: the supplier has it (confirmed)</option><option value="not-applied">not applied (rejected)</option></select>
${ref(`rr-${l.id}`, false)}${evidence(`rev-${l.id}`)}<button type="submit">Resolve</button></fieldset>`,
      ),
    );
  return out.join('') || '<p>Nothing to do on this line now.</p>';
}

function attemptsTable(l: Line & { attempts?: Array<Record<string, unknown>> }): string {
  const attempts = l.attempts ?? [];
  if (!attempts.length) return '<p>No attempts yet.</p>';
  return `<table><caption>Attempts</caption><thead><tr><th scope="col">Attempt</th><th scope="col">Status</th><th scope="col">Reference</th>
<th scope="col">Late supplier answer</th></tr></thead><tbody>${attempts
    .map(
      (a) => `<tr><td><code>${esc(a.id)}</code></td><td>${esc(a.status)}</td><td>${esc(a.providerReference ?? '—')}</td>
<td>${a.lateOutcome ? `<span class="badge warn">late, kept as evidence</span> ${esc(a.lateOutcomeAt)}${json(a.lateOutcome)}` : '—'}</td></tr>`,
    )
    .join('')}</tbody></table>`;
}

function bookingPage(r: ConsoleRequest, b: Booking, jobs: Array<Record<string, unknown>>): string {
  const v = r.viewer;
  const lines = b.lines
    .map(
      (l) => `<section aria-labelledby="line-${esc(l.id)}"><h2 id="line-${esc(l.id)}">${esc(l.channel)} · ${esc(l.adapterKey)} ·
<span data-line-status>${esc(l.status)}</span></h2>
<p>Line <code>${esc(l.id)}</code>, version <strong data-line-version>${esc(l.version)}</strong>, budget ${money(l.budgetMinor, b.currency)},
method ${esc(l.executionMethod ?? 'supplier adapter')}, claimed by ${esc(l.claimedBy ?? 'nobody')}, provider reference ${esc(l.providerReference ?? '—')}.</p>
${attemptsTable(l as Line & { attempts?: Array<Record<string, unknown>> })}${lineActions(v, b, l)}</section>`,
    )
    .join('');
  const timeline = `<h2>Events</h2><ol class="timeline">${b.events
    .map(
      (e) =>
        `<li><time datetime="${esc(e.createdAt)}">${esc(e.createdAt)}</time> <strong>${esc(e.action)}</strong> by ${esc(e.actorId)} (${esc(e.actor)}, ${esc(e.source)})${e.lineId ? ` on line <code>${esc(e.lineId.slice(0, 8))}</code>` : ''}${
          // A supplier's answer after the line moved on: evidence for whoever reconciles it.
          e.action === 'line.late-supplier-answer' ? ` <span class="badge warn">late supplier answer</span>${json(e.detail)}` : ''
        }</li>`,
    )
    .join('')}</ol>`;
  const jobsList = jobs.length
    ? `<ul>${jobs.map((j) => `<li>${esc(j.purpose)} <code>${esc(j.supplier_url)}</code> on line <code>${esc(String(j.line_id).slice(0, 8))}</code> by ${esc(j.requested_by)}, ${esc(j.status)}</li>`).join('')}</ul>`
    : '<p>None recorded.</p>';
  const browserJobs = `<h2>Browser-job intents</h2>
<p class="note">Recording an intent starts nothing and buys nothing. It is bound to the approved snapshot
<code data-snapshot-digest>${esc(b.snapshotDigest)}</code>: if the booking's snapshot differs, it is refused.</p>${jobsList}
${postForm(
  v,
  `/console/fulfilment/bookings/${b.id}/browser-jobs`,
  { expectedSnapshotDigest: b.snapshotDigest },
  `<fieldset><legend>Record an intent</legend>
<label for="bj-line">Line</label><select id="bj-line" name="channelCampaignId">${b.lines.map((l) => `<option value="${esc(l.channelCampaignId)}">${esc(l.channel)} · ${esc(l.adapterKey)}</option>`).join('')}</select>
<label for="bj-purpose">Purpose</label><select id="bj-purpose" name="purpose"><option value="observe">observe</option><option value="prepare">prepare</option></select>
<label for="bj-url">Supplier URL</label><input id="bj-url" name="supplierUrl" type="url" required maxlength="2000" size="60">
<label><input type="checkbox" name="readOnlyConfirmed" value="true" required> I confirm this is read-only</label>
<button type="submit">Record intent</button></fieldset>`,
)}`;
  const summary = `<p>Client ${esc(b.client.name)} <code>${esc(b.advertiserId)}</code> · campaign ${esc(b.campaignName)} · status <strong>${esc(b.status)}</strong>
· version ${esc(b.version)} · ${esc(b.executionMode)} · media budget ${money(b.mediaBudgetMinor, b.currency)} · due ${esc(b.confirmationDueAt)}</p>`;
  return layout(`Booking ${b.id.slice(0, 8)}`, summary + lines + timeline + browserJobs, v, r.flash);
}

/** Staff see a booking as the staff routes decide: active staff, assigned to its client; anything else is not found. */
async function staffBooking(r: ConsoleRequest, db: import('knex').Knex, staffCache: StaffCache, id: string): Promise<Booking> {
  const staff = await requireStaff(staffCache, r.principal);
  const booking = await findBookingById(db, uuidOr404(id));
  if (!booking) throw notFound();
  requireAssigned(staff, booking.advertiserId);
  return booking;
}

const LINE_OPS: Record<string, { operationId: string; fields: string[] }> = {
  claim: { operationId: 'fulfilmentClaimLine', fields: [] },
  start: { operationId: 'fulfilmentStartLine', fields: [] },
  confirm: { operationId: 'fulfilmentConfirmLine', fields: ['providerReference', 'evidence'] },
  reject: { operationId: 'fulfilmentRejectLine', fields: ['evidence'] },
  uncertain: { operationId: 'fulfilmentUncertainLine', fields: ['evidence'] },
  resolve: { operationId: 'fulfilmentResolveLine', fields: ['outcome', 'providerReference', 'evidence'] },
};

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
    const jobs = await db('browser_jobs').where({ booking_id: booking.id }).orderBy('created_at', 'desc').limit(20);
    res.type('html').send(bookingPage(r, booking, jobs));
  });

  post('/console/fulfilment/bookings/:bookingId/lines/:lineId/:op', async (r, req) => {
    const op = LINE_OPS[String(req.params.op)];
    if (!op) throw notFound();
    const form = req.body as Record<string, string>;
    const args: Record<string, unknown> = {
      bookingId: req.params.bookingId,
      lineId: req.params.lineId,
      expectedVersion: formInt(form.expectedVersion),
    };
    for (const f of op.fields) if (form[f]) args[f] = form[f];
    await r.call(op.operationId, args);
    return { text: `Done: ${req.params.op}.`, back: `/console/fulfilment/bookings/${req.params.bookingId}` };
  });

  post('/console/fulfilment/bookings/:id/browser-jobs', async (r, req) => {
    const booking = await staffBooking(r, db, staffCache, String(req.params.id));
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
    return {
      text: `Recorded browser-job intent ${browserJob.id}. Nothing was started.`,
      back: `/console/fulfilment/bookings/${booking.id}`,
    };
  });
};
