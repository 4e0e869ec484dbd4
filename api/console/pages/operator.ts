import type { Knex } from 'knex';
import { requireHuman } from '../../http/guards';
import type { ConsoleRequest } from '../context';
import { esc, json, layout, money, postForm } from '../html';
import { formInt, type PageRegistrar } from '../routing';

// The API's own guard for these operations: a person with operator:reconcile.
const reconciler = requireHuman('use the operator pages', 'operator:reconcile');

async function walletBalance(r: ConsoleRequest): Promise<{ balanceMinor: number; currency: string }> {
  const { summary } = (await r.call('billingSummary', {})) as { summary: { wallet: { balanceMinor: number; currency: string } } };
  return summary.wallet;
}

function lookups(): string {
  const find = (action: string, name: string, label: string, pattern = '') =>
    `<form method="get" action="${action}"><label>${label} <input name="${name}" required maxlength="100"${pattern}></label> <button type="submit">Open</button></form>`;
  return `<h2>Uncertain outcome (a booking's line)</h2>${find('/console/operator/bookings', 'id', 'Booking id')}
<h2>Identity attempts</h2>${find('/console/operator/cohorts', 'id', 'Cohort id')}
<h2>Funding requests</h2>${find('/console/operator/funding', 'id', 'Funding request id', ' pattern="wtr-[a-f0-9]{64}"')}`;
}

async function recentFunding(db: Knex, advertiserId: string) {
  return db('funding_requests').where({ advertiser_id: advertiserId }).orderBy('created_at', 'desc').limit(20);
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
    const funding = await recentFunding(db, r.principal.advertiserId);
    const list = funding.length
      ? `<h2>Recent funding requests</h2><ul>${funding
          .map((f) => `<li><a href="/console/operator/funding/${esc(f.id)}"><code>${esc(f.id)}</code></a> ${esc(f.status)}</li>`)
          .join('')}</ul>`
      : '';
    res.type('html').send(layout('Operator', lookups() + list, r.viewer, r.flash));
  });
  byQuery('bookings');
  byQuery('cohorts');
  byQuery('funding');

  get('/console/operator/bookings/:id', async (r, req, res) => {
    await reconciler(r.principal);
    const { booking } = (await r.call('getBooking', { id: req.params.id })) as {
      booking: {
        id: string;
        status: string;
        lines: Array<{ id: string; status: string; version: number; channel: string; adapterKey: string }>;
      };
    };
    const lines = booking.lines
      .map(
        (
          l,
        ) => `<section><h2>${esc(l.channel)} · ${esc(l.adapterKey)} · ${esc(l.status)}</h2><p>Line <code>${esc(l.id)}</code>, version ${esc(l.version)}.</p>
${
  l.status === 'in-progress'
    ? postForm(
        r.viewer,
        `/console/operator/bookings/${booking.id}/lines/${l.id}/uncertain`,
        { expectedVersion: l.version },
        `<label for="ev-${esc(l.id)}">Evidence that the outcome is uncertain</label><textarea id="ev-${esc(l.id)}" name="evidence" required minlength="10" maxlength="20000"></textarea>
<button type="submit">Mark uncertain</button>`,
      )
    : '<p>Only a line in progress can be marked uncertain.</p>'
}</section>`,
      )
      .join('');
    res.type('html').send(layout(`Booking ${booking.id.slice(0, 8)}: ${booking.status}`, lines, r.viewer, r.flash));
  });

  post('/console/operator/bookings/:bookingId/lines/:lineId/uncertain', async (r, req) => {
    const form = req.body as Record<string, string>;
    await r.call('operatorMarkLineUncertain', {
      bookingId: req.params.bookingId,
      lineId: req.params.lineId,
      expectedVersion: formInt(form.expectedVersion),
      evidence: form.evidence,
    });
    return { text: 'The line now needs reconciliation.', back: `/console/operator/bookings/${req.params.bookingId}` };
  });

  get('/console/operator/cohorts/:id', async (r, req, res) => {
    await reconciler(r.principal);
    const { cohort } = (await r.call('getIdentityCohort', { cohortId: req.params.id })) as {
      cohort: { id: string; revision: number; status?: string; attempts: Array<Record<string, unknown>> };
    };
    const attempts = cohort.attempts
      .map(
        (a) => `<section><h2>Attempt <code>${esc(a.id)}</code>: ${esc(a.status)}</h2>${json(a)}
${postForm(
  r.viewer,
  `/console/operator/cohorts/${cohort.id}/attempts/${String(a.id)}/resolve`,
  { expectedRevision: cohort.revision, outcome: 'discard-unavailable-result' },
  `<label for="er-${esc(a.id)}">Evidence reference</label><input id="er-${esc(a.id)}" name="evidenceReference" required minlength="3" maxlength="120">
<button type="submit">Discard: the result is unavailable</button>`,
)}</section>`,
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

  post('/console/operator/cohorts/:cohortId/attempts/:attemptId/resolve', async (r, req) => {
    const form = req.body as Record<string, string>;
    await r.call('resolveIdentityAttempt', {
      cohortId: req.params.cohortId,
      attemptId: req.params.attemptId,
      expectedRevision: formInt(form.expectedRevision),
      outcome: form.outcome,
      evidenceReference: form.evidenceReference,
    });
    return { text: 'The attempt was resolved.', back: `/console/operator/cohorts/${req.params.cohortId}` };
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
      `<label for="session">Checkout session id</label><input id="session" name="sessionId" required maxlength="255" pattern="cs_[A-Za-z0-9_]+" size="50">
<button type="submit">Reconcile (records evidence, credits nothing)</button>`,
    )}
<h2>Reconciliations</h2>${inspected.reconciliations.length ? `<ul>${inspected.reconciliations.map((x) => `<li><strong>${esc(x.result)}</strong> session <code>${esc(x.sessionId)}</code> by ${esc(x.reconciledBy)} at ${esc(x.createdAt)}</li>`).join('')}</ul>` : '<p>None yet.</p>'}
<h2>Settlement events</h2>${json(inspected.settlementEvents)}<h2>Ledger entries</h2>${json(inspected.ledgerEntries)}`;
    res.type('html').send(layout('Funding request', body, r.viewer, r.flash));
  });

  post('/console/operator/funding/:id/reconcile', async (r, req) => {
    const form = req.body as Record<string, string>;
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
