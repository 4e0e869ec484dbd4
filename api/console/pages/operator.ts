import type { Knex } from 'knex';
import { requireHuman } from '../../http/guards';
import type { ConsoleRequest } from '../context';
import type { BookingRow } from '../../../shared/bookings/booking-store';
import type { Booking } from '../../../shared/bookings/booking-schemas';
import { FormFill } from '../forms';
import { esc, json, layout, money, postForm } from '../html';
import { at } from '../time';
import { byAttention, evidenceTrail, lineAnchor, lineNames, statusBadge, timeline } from '../views/lines';
import { formInt, type PageRegistrar } from '../routing';
import { workspaceBookings } from '../views/workspace-bookings';
import { operationWords, withItsSupplier } from '../views/staff-booking';
import { pendingOperationsOf, type LineOperationView } from '../../../shared/bookings/lines/operation-store';

// The API's own guard for these operations: a person with operator:reconcile.
const reconciler = requireHuman('use the operator pages', 'operator:reconcile');

async function walletBalance(r: ConsoleRequest): Promise<{ balanceMinor: number; currency: string }> {
  const { summary } = (await r.call('billingSummary', {})) as { summary: { wallet: { balanceMinor: number; currency: string } } };
  return summary.wallet;
}

function lookups(): string {
  const find = (action: string, name: string, label: string, pattern = '') => {
    const f = new FormFill(null, action);
    return `<form method="get" action="${action}">${f.input({ id: `find-${name}-${action.split('/').pop()}`, name, label, required: true, attrs: `maxlength="100"${pattern}` })} <button type="submit">Open</button></form>`;
  };
  return `<h2>Identity attempts</h2>${find('/console/operator/cohorts', 'id', 'Cohort id')}
<h2>Funding requests</h2>${find('/console/operator/funding', 'id', 'Funding request id', ' pattern="wtr-[a-f0-9]{64}"')}`;
}

async function recentFunding(db: Knex, advertiserId: string) {
  return db('funding_requests').where({ advertiser_id: advertiserId }).orderBy('created_at', 'desc').limit(20);
}

function bookingsTable(rows: Array<BookingRow & { line_counts?: Record<string, number> }>, zone: string): string {
  const heading = '<h2 id="bookings-heading">Your workspace’s bookings</h2>';
  if (!rows.length) return `${heading}<p>No bookings yet.</p>`;
  const counted = (row: { line_counts?: Record<string, number> }, status: string) => Number(row.line_counts?.[status] ?? 0);
  return `${heading}<table aria-labelledby="bookings-heading"><thead><tr><th scope="col">Campaign</th><th scope="col">Client</th>
<th scope="col">Status</th><th scope="col">Lines</th><th scope="col">Submitted</th></tr></thead><tbody>${rows
    .map((b) => {
      const total = Object.values(b.line_counts ?? {}).reduce((sum, n) => sum + Number(n), 0);
      const reconcile = counted(b, 'reconciliation-required');
      const inProgress = counted(b, 'in-progress');
      const lines = [
        `${total} line${total === 1 ? '' : 's'}`,
        reconcile ? `${statusBadge('reconciliation-required')} ${reconcile} to reconcile` : '',
        inProgress ? `${inProgress} in progress (can be marked uncertain)` : '',
      ]
        .filter(Boolean)
        .join(', ');
      return `<tr${reconcile ? ' class="attention"' : ''}><td><a href="/console/operator/bookings/${esc(b.id)}">${esc(b.campaign_name)}</a> <code>${esc(b.id.slice(0, 8))}</code></td>
<td>${esc(b.client_name)}</td><td>${statusBadge(b.status)}</td><td>${lines}</td><td>${at(b.submitted_at instanceof Date ? b.submitted_at.toISOString() : b.submitted_at, zone)}</td></tr>`;
    })
    .join('')}</tbody></table>`;
}

function resolveForm(r: ConsoleRequest, cohort: { id: string; revision: number }, a: Record<string, unknown>): string {
  const f = new FormFill(r.draft, `/console/operator/cohorts/${cohort.id}/attempts/${String(a.id)}/resolve`);
  return postForm(
    r.viewer,
    f.action,
    { expectedRevision: cohort.revision, outcome: 'discard-unavailable-result' },
    `${f.input({ id: `er-${String(a.id)}`, name: 'evidenceReference', required: true, attrs: 'minlength="3" maxlength="120"' })}
<button type="submit">Discard: the result is unavailable</button>`,
  );
}

/** A booking as an operator works it: lines needing a person first, each with its evidence, the uncertain form where it applies, and the history. */
function operatorBookingPage(r: ConsoleRequest, b: Booking, pending: Map<string, LineOperationView>): string {
  const names = lineNames(b);
  const zone = r.viewer.timeZone;
  const lines = byAttention(b.lines, r.viewer.userId)
    .map((l) => {
      const f = new FormFill(r.draft, `/console/operator/bookings/${b.id}/lines/${l.id}/uncertain`);
      const action = withItsSupplier(l, pending.get(l.id))
        ? postForm(
            r.viewer,
            f.action,
            { expectedVersion: l.version },
            `${f.textarea({ id: `ev-${l.id}`, name: 'evidence', label: 'Evidence that the outcome is uncertain', required: true, attrs: 'minlength="10" maxlength="20000"' })}
<button type="submit">Mark uncertain</button>`,
          )
        : '<p>Only a line whose booking or change is with its supplier now can be marked uncertain.</p>';
      return `<section id="${lineAnchor(l.id)}" class="line${l.status === 'reconciliation-required' ? ' attention' : ''}" aria-labelledby="line-h-${esc(l.id)}">
<h2 id="line-h-${esc(l.id)}">${esc(names.get(l.id))} ${statusBadge(l.status, 'data-line-status')}</h2>
<p>Line <code>${esc(l.id)}</code>, version ${esc(l.version)}, provider reference ${esc(l.providerReference ?? '—')}${
        l.pendingOperation && l.pendingOperation !== 'book'
          ? `, in hand: <strong data-line-operation>${esc(operationWords(l.pendingOperation))}</strong>${pending.get(l.id) ? ` (${esc(pending.get(l.id)!.status)})` : ''}`
          : ''
      }.</p>
${evidenceTrail(b, l, zone)}${action}</section>`;
    })
    .join('');
  const summary = `<p>Campaign ${esc(b.campaignName)} · client ${esc(b.client.name)} · status ${statusBadge(b.status)} · submitted ${at(b.submittedAt, zone)} · <a href="/console/campaigns/${esc(b.campaignId)}/delivery">delivery and pacing</a></p>`;
  return layout(`Booking ${b.id.slice(0, 8)}: ${b.campaignName}`, summary + lines + timeline(b, zone), r.viewer, r.flash);
}

export const operatorPages: PageRegistrar = (_router, { get, post }, c) => {
  const { db } = c.api;
  const byQuery = (path: string) =>
    get(`/console/operator/${path}`, async (r, req, res) => {
      await reconciler(r.principal);
      res.redirect(303, `/console/operator/${path}/${encodeURIComponent(String(req.query.id ?? ''))}`);
    });

  get('/console/operator', async (r, _req, res) => {
    await reconciler(r.principal);
    const bookings = await workspaceBookings(r, db);
    const funding = await recentFunding(db, r.principal.advertiserId);
    const list = funding.length
      ? `<h2>Recent funding requests</h2><ul>${funding
          .map((f) => `<li><a href="/console/operator/funding/${esc(f.id)}"><code>${esc(f.id)}</code></a> ${esc(f.status)}</li>`)
          .join('')}</ul>`
      : '';
    res.type('html').send(layout('Operator', bookingsTable(bookings, r.viewer.timeZone) + lookups() + list, r.viewer, r.flash));
  });
  byQuery('cohorts');
  byQuery('funding');

  get('/console/operator/bookings/:id', async (r, req, res) => {
    await reconciler(r.principal);
    const { booking } = (await r.call('getBooking', { id: req.params.id })) as { booking: Booking };
    res.type('html').send(operatorBookingPage(r, booking, await pendingOperationsOf(db, booking.id)));
  });

  post('/console/operator/bookings/:bookingId/lines/:lineId/uncertain', async (r, req, about) => {
    const form = req.body as Record<string, string>;
    const back = `/console/operator/bookings/${encodeURIComponent(String(req.params.bookingId))}`;
    // The booking as the API shows it to this operator (their workspace and product), to name the line.
    const { booking } = (await r.call('getBooking', { id: req.params.bookingId })) as { booking: Booking };
    const name = lineNames(booking).get(String(req.params.lineId).toLowerCase());
    about.subject = name;
    about.back = name ? `${back}#${lineAnchor(String(req.params.lineId).toLowerCase())}` : back;
    await r.call('operatorMarkLineUncertain', {
      bookingId: req.params.bookingId,
      lineId: req.params.lineId,
      expectedVersion: formInt(form.expectedVersion),
      evidence: form.evidence,
    });
    return { text: `${name ?? 'The line'} now needs reconciliation.`, back: about.back };
  });

  get('/console/operator/cohorts/:id', async (r, req, res) => {
    await reconciler(r.principal);
    const { cohort } = (await r.call('getIdentityCohort', { cohortId: req.params.id })) as {
      cohort: { id: string; revision: number; status?: string; attempts: Array<Record<string, unknown>> };
    };
    const attempts = cohort.attempts
      .map(
        (a) => `<section><h2>Attempt <code>${esc(a.id)}</code>: ${esc(a.status)}</h2>${json(a)}
${resolveForm(r, cohort, a)}</section>`,
      )
      .join('');
    res
      .type('html')
      .send(
        layout(
          `Cohort ${cohort.id.slice(0, 8)}`,
          `<p>Revision ${esc(cohort.revision)}. Resolving retries and queues nothing.</p>${attempts}`,
          r.viewer,
          r.flash,
        ),
      );
  });

  post('/console/operator/cohorts/:cohortId/attempts/:attemptId/resolve', async (r, req, about) => {
    const form = req.body as Record<string, string>;
    about.subject = `Attempt ${String(req.params.attemptId)}`;
    await r.call('resolveIdentityAttempt', {
      cohortId: req.params.cohortId,
      attemptId: req.params.attemptId,
      expectedRevision: formInt(form.expectedRevision),
      outcome: form.outcome,
      evidenceReference: form.evidenceReference,
    });
    return {
      text: `Attempt ${String(req.params.attemptId)} was resolved: its result is discarded.`,
      back: `/console/operator/cohorts/${req.params.cohortId}`,
    };
  });

  get('/console/operator/funding/:id', async (r, req, res) => {
    await reconciler(r.principal);
    const inspected = (await r.call('inspectTopupRequest', { requestId: req.params.id })) as {
      request: Record<string, unknown>;
      settlementEvents: unknown[];
      ledgerEntries: unknown[];
      reconciliations: Array<Record<string, unknown>>;
    };
    const wallet = await walletBalance(r);
    const body = `<p class="note"><strong>Reconciling never credits the wallet.</strong> It fetches the exact provider session, matches it
against this request and records the result as evidence. Only the provider's signed settlement credits the wallet.</p>
<p>Wallet balance now: <strong data-wallet-balance>${money(wallet.balanceMinor, wallet.currency)}</strong></p>
<h2>Request</h2>${json(inspected.request)}
<h2>Reconcile</h2>${postForm(
      r.viewer,
      `/console/operator/funding/${String(inspected.request.id)}/reconcile`,
      {},
      `${new FormFill(r.draft, `/console/operator/funding/${String(inspected.request.id)}/reconcile`).input({
        id: 'session',
        name: 'sessionId',
        required: true,
        attrs: 'maxlength="255" pattern="cs_[A-Za-z0-9_]+" size="50"',
      })}
<button type="submit">Reconcile (records evidence, credits nothing)</button>`,
    )}
<h2>Reconciliations</h2>${inspected.reconciliations.length ? `<ul>${inspected.reconciliations.map((x) => `<li><strong>${esc(x.result)}</strong> session <code>${esc(x.sessionId)}</code> by ${esc(x.reconciledBy)} at ${esc(x.createdAt)}</li>`).join('')}</ul>` : '<p>None yet.</p>'}
<h2>Settlement events</h2>${json(inspected.settlementEvents)}<h2>Ledger entries</h2>${json(inspected.ledgerEntries)}`;
    res.type('html').send(layout('Funding request', body, r.viewer, r.flash));
  });

  post('/console/operator/funding/:id/reconcile', async (r, req, about) => {
    const form = req.body as Record<string, string>;
    about.subject = `Funding request ${String(req.params.id)}`;
    const before = await walletBalance(r);
    const result = (await r.call('reconcileTopupRequest', { requestId: req.params.id, sessionId: form.sessionId })) as {
      reconciliation?: { result?: string };
      result?: string;
    };
    const after = await walletBalance(r);
    const outcome = result.reconciliation?.result ?? result.result ?? 'recorded';
    return {
      text: `Reconciled: ${outcome}. Wallet balance before ${money(before.balanceMinor, before.currency)}, after ${money(after.balanceMinor, after.currency)}: reconciling never credits.`,
      back: `/console/operator/funding/${req.params.id}`,
    };
  });
};
