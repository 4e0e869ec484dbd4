import type { Amendment } from '../../../shared/bookings/amendments';
import type { Booking } from '../../../shared/bookings/booking-schemas';
import type { Control } from '../../../shared/bookings/lines/control';
import type { LineOperationView } from '../../../shared/bookings/lines/operation-store';
import type { ConsoleRequest } from '../context';
import { FormFill } from '../forms';
import { esc, layout, money, postForm } from '../html';
import { at } from '../time';
import { lineAnchor, lineNames, statusBadge, timeline, verificationHtml, type Line } from './lines';

export const campaignPath = (bookingId: string) => `/console/bookings/${bookingId}`;
export const campaignLinePath = (bookingId: string, lineId: string) => `${campaignPath(bookingId)}/lines/${lineId}`;
export const backToCampaignLine = (bookingId: string, lineId: string) => `${campaignPath(bookingId)}#${lineAnchor(lineId)}`;

/** What the page knows beyond the booking: what each line can take now (the domain's own answer), its pending operation, the amendments. */
export interface InFlight {
  booking: Booking;
  /** The controls each line can take now, by line id (`allowedControls`). */
  controls: Map<string, Control[]>;
  /** Why an amendment may not change each line now, or null (`amendable`). */
  amendRefusals: Map<string, string | null>;
  pending: Map<string, LineOperationView>;
  amendments: Amendment[];
}

const NOTE = 'maxlength="2000"';
const PAST: Record<Control, string> = { pause: 'paused', resume: 'resumed', stop: 'stopped' };

/** Why a line is or is not running, in the words people use: running, paused (may resume), ended (never again), staged. */
export function stopWords(l: Line): { kind: string; words: string } {
  if (l.stop?.kind === 'pause') return { kind: 'paused', words: 'paused: it can be resumed' };
  if (l.stop?.kind === 'end') return { kind: 'ended', words: 'ended: it will not run again' };
  if (l.stop?.kind === 'staged') return { kind: 'staged', words: 'staged: created paused at its supplier, to be enabled' };
  if (l.status === 'confirmed') return { kind: 'running', words: 'running' };
  return { kind: 'none', words: `not running (${l.status})` };
}

/** A line's operation in hand, said as what was asked and where it stands ("pause: requested"). */
export function pendingWords(l: Line, op: LineOperationView | undefined, currency: string): string {
  if (!l.pendingOperation) return 'none';
  if (!op) return l.pendingOperation === 'book' ? 'its booking, with its supplier' : esc(l.pendingOperation);
  const change =
    op.kind === 'change-budget' ? ` to ${money(op.budgetToMinor, currency)}${op.endDateTo ? `, ending ${esc(op.endDateTo)}` : ''}` : '';
  return `${esc(op.kind)}${change}: ${esc(op.status)}`;
}

/** The latest budget change asked of the line, and where its amendment stands. */
function lastBudgetChange(l: Line, amendments: Amendment[], currency: string): string {
  for (const a of amendments) {
    const op = a.lines.find((x) => x.lineId === l.id);
    if (op) {
      return `${money(op.budgetFromMinor, currency)} → ${money(op.budgetToMinor, currency)}: <span data-amendment-status>${esc(op.status)}</span> (amendment ${esc(a.status)})${op.reason ? `, ${esc(op.reason)}` : ''}`;
    }
  }
  return 'none';
}

function controlForm(r: ConsoleRequest, action: string, control: Control, hidden: Record<string, string | number>, id: string): string {
  const f = new FormFill(r.draft, action);
  const note = f.input({ id, name: 'note', label: 'Note (optional)', attrs: NOTE });
  const button =
    control === 'stop'
      ? '<button type="submit" class="danger">Stop…</button>'
      : `<button type="submit">${control === 'pause' ? 'Pause' : 'Resume'}</button>`;
  return postForm(
    r.viewer,
    action,
    hidden,
    `<fieldset><legend>${control[0]!.toUpperCase()}${control.slice(1)}</legend>${note}${button}</fieldset>`,
    'inline',
  );
}

function lineSection(r: ConsoleRequest, x: InFlight, l: Line, name: string): string {
  const b = x.booking;
  const stop = stopWords(l);
  const base = campaignLinePath(b.id, l.id);
  const forms = (x.controls.get(l.id) ?? [])
    .map((c) => controlForm(r, `${base}/${c}`, c, { expectedVersion: l.version }, `${c}-note-${l.id}`))
    .join('');
  return `<section id="${lineAnchor(l.id)}" class="line" aria-labelledby="line-h-${esc(l.id)}">
<h3 id="line-h-${esc(l.id)}">${esc(name)} ${statusBadge(l.status, 'data-line-status')}</h3>
<dl class="detail"><dt>Now</dt><dd data-line-state="${esc(l.state)}">${esc(stateWords(l.state))}</dd>
<dt>Budget</dt><dd data-line-budget>${money(l.budgetMinor, b.currency)}</dd>
<dt>Running</dt><dd data-stop-kind="${esc(stop.kind)}">${esc(stop.words)}</dd>
<dt>In hand</dt><dd data-pending-operation>${pendingWords(l, x.pending.get(l.id), b.currency)}</dd>
<dt>Last budget change</dt><dd>${lastBudgetChange(l, x.amendments, b.currency)}</dd>
<dt>Version</dt><dd data-line-version>${esc(l.version)}</dd></dl>
${verificationHtml(l, b.currency)}${forms || '<p>Nothing can be asked of this line now.</p>'}</section>`;
}

function amendForm(r: ConsoleRequest, x: InFlight, names: Map<string, string>): string {
  const b = x.booking;
  const f = new FormFill(r.draft, `${campaignPath(b.id)}/amend`);
  const open = b.lines.filter((l) => x.amendRefusals.get(l.id) === null);
  if (!open.length)
    return '<h2 id="amend-heading">Amend the budget</h2><p>No line can be amended now: only running or paused lines with nothing else in hand.</p>';
  const total = b.lines.reduce((sum, l) => sum + l.budgetMinor, 0);
  const budgets = open
    .map((l) =>
      f.input({
        id: `budget-${l.id}`,
        name: `budget-${l.id}`,
        label: `${names.get(l.id)!} budget, ${b.currency} (now ${(l.budgetMinor / 100).toFixed(2)})`,
        initial: (l.budgetMinor / 100).toFixed(2),
        attrs: 'inputmode="decimal" pattern="\\d{1,13}(\\.\\d{1,2})?" size="14"',
      }),
    )
    .join('');
  return `<h2 id="amend-heading">Amend the budget</h2>
<p>Total budget now <strong data-total-budget>${money(total, b.currency)}</strong>. Change a line's budget (the total follows), and the end
date if the suppliers allow it. Each change goes to the line's supplier; on a live booking an increase is held from the wallet first.</p>
${postForm(
  r.viewer,
  f.action,
  { expectedVersion: b.version },
  `<fieldset><legend>Amend</legend>${budgets}
${f.input({ id: 'amend-end', name: 'endDate', type: 'date', label: `End date (optional; now ${b.endDate})` })}
${f.input({ id: 'amend-note', name: 'note', label: 'Note (optional)', attrs: NOTE })}
${f.checkbox({ id: 'amend-confirm-stale', name: 'confirmStale', value: 'yes', label: 'Cut even if the spend figures are behind (a line may have spent more than they show)' })}
<button type="submit">Amend budget</button></fieldset>`,
)}`;
}

function amendmentHistory(x: InFlight, names: Map<string, string>, zone: string): string {
  const b = x.booking;
  if (!x.amendments.length) return '<h2 id="amendments-heading">Amendments</h2><p>None yet.</p>';
  const rows = x.amendments
    .map((a) => {
      const lines = a.lines
        .map(
          (op) =>
            `<li>${esc(names.get(op.lineId) ?? op.lineId)}: ${money(op.budgetFromMinor, b.currency)} → ${money(op.budgetToMinor, b.currency)}, ${statusBadge(op.status)}${op.reason ? ` ${esc(op.reason)}` : ''}</li>`,
        )
        .join('');
      const end = a.endDateTo ? `${esc(a.endDateFrom ?? '—')} → ${esc(a.endDateTo)}` : '—';
      return `<tr><td>${at(a.createdAt, zone)}</td><td>${esc(a.requestedBy)}</td><td data-amendment>${statusBadge(a.status)}</td>
<td><ul class="plain">${lines}</ul></td><td>${end}</td><td>${money(a.increaseMinor, b.currency)}</td><td>${esc(a.note ?? '')}</td></tr>`;
    })
    .join('');
  return `<h2 id="amendments-heading">Amendments</h2><table aria-labelledby="amendments-heading"><thead><tr><th scope="col">Asked</th>
<th scope="col">By</th><th scope="col">Status</th><th scope="col">Lines</th><th scope="col">End date</th><th scope="col">Held from wallet</th>
<th scope="col">Note</th></tr></thead><tbody>${rows}</tbody></table>`;
}

/** A running campaign as its advertiser controls it: the whole campaign, each line, the budget, and what was asked before. */
export function inFlightPage(r: ConsoleRequest, x: InFlight): string {
  const b = x.booking;
  const zone = r.viewer.timeZone;
  const names = lineNames(b);
  // The campaign takes a control when any of its lines can (the domain skips the others, naming why).
  const campaignControls = (['pause', 'resume', 'stop'] as const).filter((c) => b.lines.some((l) => x.controls.get(l.id)?.includes(c)));
  const whole = campaignControls.length
    ? campaignControls.map((c) => controlForm(r, `${campaignPath(b.id)}/${c}`, c, {}, `${c}-note-campaign`)).join('')
    : '<p>Nothing can be asked of the whole campaign now.</p>';
  const summary = `<p>Now <strong data-booking-state="${esc(b.state)}">${esc(stateWords(b.state))}</strong> · client ${esc(b.client.name)} · booking <code>${esc(b.id.slice(0, 8))}</code> ${statusBadge(b.status, 'data-booking-status')}
· version <span data-booking-version>${esc(b.version)}</span> · ${esc(b.executionMode)} · flight ${esc(b.startDate)} to ${esc(b.endDate)}</p>`;
  const lines = b.lines.map((l) => lineSection(r, x, l, names.get(l.id)!)).join('');
  const body = `${summary}<section aria-labelledby="whole-heading"><h2 id="whole-heading">The whole campaign</h2><p>Pausing or resuming asks every line that can take it; the others are named with why.
Stopping ends the campaign for good, after you confirm it.</p>${whole}</section><h2>Lines</h2>${lines}${amendForm(r, x, names)}${amendmentHistory(x, names, zone)}${timeline(b, zone)}`;
  return layout(`Campaign ${b.campaignName}`, body, r.viewer, r.flash);
}

/** The second step of a stop (it is final): what ends, the note as typed, and the form that does it. */
export function stopConfirmation(r: ConsoleRequest, b: Booking, action: string, fields: Record<string, string>, line?: Line): string {
  const what = line ? lineNames(b).get(line.id)! : `the campaign ${b.campaignName}`;
  const back = line ? backToCampaignLine(b.id, line.id) : campaignPath(b.id);
  const body = `<p class="note"><strong>Stopping cannot be undone.</strong> ${esc(what)} will end: ${line ? 'it' : 'every line that can still run'}
will not run again and cannot be resumed. To stop spending for a while, pause instead.</p>
${fields.note ? `<h2>Your note</h2><blockquote>${esc(fields.note)}</blockquote>` : ''}
${postForm(r.viewer, action, { ...fields, confirmed: 'yes' }, `<button type="submit" class="danger">Yes, stop ${esc(what)}</button>`, 'inline')}
<p><a href="${esc(back)}">No, go back</a>: what you typed is kept there.</p>`;
  return layout(`Stop ${what}?`, body, r.viewer, null);
}

/** What a campaign control did, in words: the lines asked, and those that could not take it, with why. */
export function campaignControlWords(
  b: Booking,
  control: Control,
  result: { requested: string[]; skipped: Array<{ lineId: string; reason: string }> },
): string {
  const names = lineNames(b);
  const asked = result.requested.length;
  const head = asked
    ? `The campaign is being ${PAST[control]}: asked of ${asked} line${asked === 1 ? '' : 's'}.`
    : `Nothing new was asked: the campaign is already being ${PAST[control]}.`;
  const skipped = result.skipped.map((s) => `${names.get(s.lineId) ?? s.lineId}: ${s.reason}`).join(' ');
  return skipped ? `${head} Not asked: ${skipped}` : head;
}

/** A derived state (`shared/bookings/derived-state.ts`) in words: `needs-attention` → "needs attention". */
export const stateWords = (state: string): string => state.replace(/-/g, ' ');
