import type { Booking } from '../../../shared/bookings/booking-schemas';
import { isOpen, operationStates, type LineOperation, type LineStatus } from '../../../shared/bookings/lines/state';
import type { LineOperationView } from '../../../shared/bookings/lines/operation-store';
import type { ConsoleRequest } from '../context';
import { FormFill } from '../forms';
import { esc, json, layout, money, postForm } from '../html';
import { at, dueWords } from '../time';
import {
  attentionRank,
  byAttention,
  evidenceTrail,
  lineAnchor,
  lineNames,
  statusBadge,
  timeline,
  verificationHtml,
  type Line,
} from './lines';
import type { BrowserJob } from '../../../shared/bookings/browser-job-schemas';
import { browserJobsSection, citeEvidence } from './browser-jobs';

export const bookingPath = (bookingId: string) => `/console/fulfilment/bookings/${bookingId}`;
export const linePath = (bookingId: string, lineId: string) => `${bookingPath(bookingId)}/lines/${lineId}`;
/** The booking page, opened at the line. */
export const backToLine = (bookingId: string, lineId: string) => `${bookingPath(bookingId)}#${lineAnchor(lineId)}`;

const EVIDENCE = 'minlength="10" maxlength="20000"';

/** What a line's operation is called on the page: its booking, or the change asked after it. */
export const operationWords = (kind: string | null | undefined) =>
  !kind || kind === 'book' ? 'booking' : kind === 'change-budget' ? 'budget change' : kind;

/**
 * The change a line waits on a person for: the operation in hand, or, on a line sent to a person
 * because its delivery contradicted a change the supplier said it applied, that change.
 */
export const changeInDoubt = (l: Line): string | null =>
  l.pendingOperation ?? (l.status === 'reconciliation-required' && l.verification?.state === 'failed' ? l.verification.operation : null);

/**
 * Where the line's work stands for staff: its booking, or a pause, resume, stop or budget change
 * asked after it (`pending`), with the statuses that operation waits in (`operationStates`).
 */
function workOf(l: Line, pending: LineOperationView | undefined) {
  const kind = pending?.kind ?? ((changeInDoubt(l) ?? 'book') as LineOperation);
  const states = operationStates(kind, l.status as LineStatus);
  return {
    kind,
    /** Asked, not yet started: staff start it. */
    requested: l.status === states.requested && (!pending || pending.status === 'requested'),
    /** Started (with the supplier): staff record what the supplier did. */
    inFlight: l.status === states.inFlight && (!pending || pending.status === 'in-flight'),
  };
}

/** Whether the line's operation is with its supplier now, so that its outcome can be marked uncertain (as the domain decides). */
export function withItsSupplier(l: Line, pending: LineOperationView | undefined): boolean {
  return pending ? pending.status === 'in-flight' && workOf(l, pending).inFlight : l.status === 'in-progress';
}

/** The actions a line offers now; the domain decides again when one is sent, with the version shown here. */
function lineActions(r: ConsoleRequest, b: Booking, l: Line, pending: LineOperationView | undefined, jobs: readonly BrowserJob[]): string {
  const v = r.viewer;
  const base = linePath(b.id, l.id);
  const fill = (op: string) => new FormFill(r.draft, `${base}/${op}`);
  const status = l.status as LineStatus;
  const hidden = { expectedVersion: l.version };
  const mine = l.claimedBy === v.userId;
  const workflow = l.executionMethod !== null;
  const work = workOf(l, pending);
  const booking = work.kind === 'book';
  const what = operationWords(work.kind);
  // What staff write, and the browser evidence of this line they may cite with it.
  const evidence = (f: FormFill, id: string) =>
    f.textarea({ id, name: 'evidence', required: true, attrs: EVIDENCE }) + citeEvidence(l, jobs, `${id}-bj`, v.timeZone);
  const out: string[] = [];
  if (workflow && (isOpen(status) || l.pendingOperation !== null) && !mine && !l.claimedBy)
    out.push(postForm(v, `${base}/claim`, hidden, '<button type="submit">Claim</button>', 'inline'));
  if (workflow && mine && work.requested && status !== 'reconciliation-required')
    out.push(postForm(v, `${base}/start`, hidden, '<button type="submit">Start</button>', 'inline'));
  if (workflow && mine && work.inFlight && status !== 'reconciliation-required') {
    const f = fill('confirm');
    const reference = booking
      ? f.input({ id: `cr-${l.id}`, name: 'providerReference', required: true, attrs: 'maxlength="200"' })
      : f.input({ id: `cr-${l.id}`, name: 'providerReference', label: 'Provider reference (optional)', attrs: 'maxlength="200"' });
    out.push(
      postForm(
        v,
        f.action,
        hidden,
        `<fieldset><legend>${booking ? 'Confirm' : `The supplier applied the ${esc(what)}`}</legend>${reference}${evidence(f, `ce-${l.id}`)}<button type="submit">Confirm</button></fieldset>`,
      ),
    );
  }
  if (workflow && mine && (work.requested || work.inFlight) && status !== 'reconciliation-required') {
    const f = fill('reject');
    out.push(
      postForm(
        v,
        f.action,
        hidden,
        booking
          ? `<fieldset><legend>Reject</legend>${evidence(f, `re-${l.id}`)}<p>Rejecting cannot be undone: you will be asked to confirm it.</p><button type="submit" class="danger">Reject…</button></fieldset>`
          : `<fieldset><legend>The supplier refused the ${esc(what)}</legend>${evidence(f, `re-${l.id}`)}<p>The line goes back to where it was before the ${esc(what)} was asked.</p><button type="submit">Record the refusal</button></fieldset>`,
      ),
    );
  }
  if (withItsSupplier(l, pending)) {
    const f = fill('uncertain');
    out.push(
      postForm(
        v,
        f.action,
        hidden,
        `<fieldset><legend>Outcome uncertain</legend>${f.textarea({ id: `ue-${l.id}`, name: 'evidence', required: true, attrs: EVIDENCE })}<button type="submit">Mark uncertain</button></fieldset>`,
      ),
    );
  }
  if (status === 'reconciliation-required') {
    const f = fill('resolve');
    const options: Array<[string, string]> = booking
      ? [
          ['applied', 'applied: the supplier has it (confirmed)'],
          ['not-applied', 'not applied (rejected; you will be asked to confirm)'],
        ]
      : [
          ['applied', `applied: the ${what} happened`],
          ['not-applied', `not applied: the line is back as it was before the ${what}`],
        ];
    out.push(
      postForm(
        v,
        f.action,
        hidden,
        `<fieldset><legend>Resolve from evidence</legend>${f.select({ id: `ro-${l.id}`, name: 'outcome', required: true, options })}
${f.input({ id: `rr-${l.id}`, name: 'providerReference', label: booking ? 'Provider reference (when applied)' : 'Provider reference (optional)', attrs: 'maxlength="200"' })}${evidence(f, `rev-${l.id}`)}<button type="submit">Resolve</button></fieldset>`,
      ),
    );
  }
  // What a supplier that does less than it says left to a person (verified control): done by hand, recorded here.
  if (l.verification?.followUp && !l.verification.followUpDone) {
    const f = fill('follow-up');
    out.push(
      postForm(
        v,
        f.action,
        { operationId: l.verification.operationId },
        `<fieldset><legend>Done at the supplier</legend><p>${esc(l.verification.followUp)}</p>${f.textarea({ id: `fu-${l.id}`, name: 'evidence', required: true, attrs: EVIDENCE })}<button type="submit">Record it done</button></fieldset>`,
      ),
    );
  }
  // A workflow line that ran: staff enter the delivery its supplier reported to them.
  if (workflow && (l.confirmedAt !== null || status === 'confirmed') && status !== 'rejected') {
    const f = fill('delivery');
    out.push(
      postForm(
        v,
        f.action,
        {},
        `<fieldset><legend>Enter delivery</legend><p>CSV, one row per day: <code>date,impressions,clicks,completions,spend_minor</code>. A day entered again replaces its figures; every figure is kept with who entered it.</p>${f.textarea({ id: `dl-${l.id}`, name: 'csv', label: 'Delivery CSV', required: true, attrs: 'rows="6" maxlength="100000"' })}<button type="submit">Enter delivery</button></fieldset>`,
      ),
    );
  }
  return out.join('') || '<p>Nothing to do on this line now.</p>';
}

function attemptsTable(l: Line): string {
  const attempts = (l as Line & { attempts?: Array<Record<string, unknown>> }).attempts ?? [];
  if (!attempts.length) return '<p>No attempts yet.</p>';
  return `<table><caption>Attempts</caption><thead><tr><th scope="col">Attempt</th><th scope="col">Status</th><th scope="col">Reference</th>
<th scope="col">Late supplier answer</th></tr></thead><tbody>${attempts
    .map(
      (a) => `<tr><td><code>${esc(a.id)}</code></td><td>${esc(a.status)}</td><td>${esc(a.providerReference ?? '—')}</td>
<td>${a.lateOutcome ? `<span class="badge warn">late, kept as evidence</span> ${esc(a.lateOutcomeAt)}${json(a.lateOutcome)}` : '—'}</td></tr>`,
    )
    .join('')}</tbody></table>`;
}

/** When the booking's confirmation is due, in the viewer's zone, and where that stands now. */
export function due(b: Pick<Booking, 'confirmationDueAt' | 'overdue'>, zone: string): string {
  const { overdue, words } = dueWords(b.confirmationDueAt);
  // Overdue only while the booking is open; a settled booking past its due time merely was due.
  const text = b.overdue || !overdue ? words : `was due ${words.replace('overdue by ', '')} ago`;
  return `${at(b.confirmationDueAt, zone)} <span class="${b.overdue ? 'status attention' : 'who-when'}" data-due>${esc(text)}</span>`;
}

export function bookingPage(r: ConsoleRequest, b: Booking, jobs: readonly BrowserJob[], pending: Map<string, LineOperationView>): string {
  const v = r.viewer;
  const names = lineNames(b);
  const name = (l: Line) => names.get(l.id)!;
  const ordered = byAttention(b.lines, v.userId);
  const waiting = ordered.filter((l) => attentionRank(l, v.userId) <= 1);
  const needs = waiting.length
    ? `<section class="note" aria-labelledby="needs-heading"><h2 id="needs-heading">Needs a person now</h2><ul>${waiting
        .map(
          (l) =>
            `<li><a href="#${lineAnchor(l.id)}">${esc(name(l))}</a> ${statusBadge(l.status)}${l.claimedBy === v.userId ? ' (yours)' : ''}</li>`,
        )
        .join('')}</ul></section>`
    : '';
  const lines = ordered
    .map(
      (
        l,
      ) => `<section id="${lineAnchor(l.id)}" class="line${attentionRank(l, v.userId) === 0 ? ' attention' : ''}" aria-labelledby="line-h-${esc(l.id)}">
<h2 id="line-h-${esc(l.id)}">${esc(name(l))} ${statusBadge(l.status, 'data-line-status')}</h2>
<p>Line <code>${esc(l.id)}</code>, version <strong data-line-version>${esc(l.version)}</strong>, budget ${money(l.budgetMinor, b.currency)},
method ${esc(l.executionMethod ?? 'supplier adapter')}, claimed by ${esc(l.claimedBy ?? 'nobody')}, provider reference ${esc(l.providerReference ?? '—')}.</p>
${l.pendingOperation && l.pendingOperation !== 'book' ? `<p class="note">In hand: <strong data-line-operation>${esc(operationWords(l.pendingOperation))}</strong>${pending.get(l.id) ? ` (${esc(pending.get(l.id)!.status)})` : ''}, asked after the booking${pending.get(l.id)?.note ? `: <q>${esc(pending.get(l.id)!.note)}</q>` : ''}.</p>` : ''}
${verificationHtml(l, b.currency)}${evidenceTrail(b, l, v.timeZone)}${attemptsTable(l)}${lineActions(r, b, l, pending.get(l.id), jobs)}</section>`,
    )
    .join('');
  const browserJobs = browserJobsSection(r, b, jobs, names, `${bookingPath(b.id)}/browser-jobs`);
  const summary = `<p>Client ${esc(b.client.name)} <code>${esc(b.advertiserId)}</code> · campaign ${esc(b.campaignName)} · status ${statusBadge(b.status, 'data-booking-status')}
· version ${esc(b.version)} · ${esc(b.executionMode)} · media budget ${money(b.mediaBudgetMinor, b.currency)} · confirmation due ${due(b, v.timeZone)}</p>`;
  return layout(`Booking ${b.id.slice(0, 8)}`, summary + needs + lines + timeline(b, v.timeZone) + browserJobs, v, r.flash);
}

/**
 * The second step of an action that cannot be undone (a line ends rejected): what will happen,
 * the evidence as typed, and a second form that does it. Going back keeps what was typed.
 */
export function rejectConfirmation(r: ConsoleRequest, b: Booking, l: Line, op: string, fields: Record<string, string>): string {
  const name = lineNames(b).get(l.id)!;
  const hidden: Record<string, string> = { ...fields, confirmed: 'yes' };
  const body = `<p class="note"><strong>Rejecting cannot be undone.</strong> ${esc(name)} will be settled as rejected: it cannot be confirmed,
claimed or resolved afterwards.</p>
<p>${esc(name)} of booking <code>${esc(b.id.slice(0, 8))}</code> (${esc(b.campaignName)}, ${esc(b.client.name)}) is now ${statusBadge(l.status)}.</p>
<h2>Your evidence</h2><blockquote>${esc(fields.evidence ?? '')}</blockquote>
${postForm(r.viewer, `${linePath(b.id, l.id)}/${op}`, hidden, `<button type="submit" class="danger">Yes, reject ${esc(name)}</button>`, 'inline')}
<p><a href="${esc(backToLine(b.id, l.id))}">No, go back to the line</a>: what you typed is kept there.</p>`;
  return layout(`Reject ${name}?`, body, r.viewer, null);
}
