import type { Booking } from '../../../shared/bookings/booking-schemas';
import type { CitedEvidence } from '../../../shared/bookings/browser-evidence-citation';
import { esc, json } from '../html';
import { at } from '../time';

export type Line = Booking['lines'][number];
type BookingEvent = Booking['events'][number];

/** Each line named as its section is headed, by its place in the plan: "Line 2 · ctv · manual". */
export function lineNames(b: Pick<Booking, 'lines'>): Map<string, string> {
  return new Map(b.lines.map((l, i) => [l.id, `Line ${i + 1} · ${l.channel} · ${l.adapterKey}`]));
}

export const lineAnchor = (lineId: string) => `line-${lineId}`;

type Tone = 'attention' | 'ok' | 'bad' | 'open' | 'neutral';
const TONE: Record<string, Tone> = {
  'reconciliation-required': 'attention',
  confirmed: 'ok',
  rejected: 'bad',
  queued: 'open',
  'in-progress': 'open',
  'stop-requested': 'open',
  stopping: 'open',
  stopped: 'neutral',
  'partially-confirmed': 'neutral',
  // Browser jobs.
  running: 'open',
  completed: 'ok',
  failed: 'bad',
};
// A mark beside the colour, so the status never rests on colour alone.
const MARK: Record<Tone, string> = { attention: '⚠', ok: '✓', bad: '✕', open: '◷', neutral: '■' };

/** A line's or booking's status as a badge coloured by what it asks of people: a person's attention, done well, done badly, under way. */
export function statusBadge(status: string, attrs = ''): string {
  const tone = TONE[status] ?? 'neutral';
  return `<span class="status ${tone}"><span aria-hidden="true">${MARK[tone]} </span><span${attrs ? ` ${attrs}` : ''}>${esc(status)}</span></span>`;
}

/** Events in words, for people scanning a history. */
const ACTION_WORDS: Record<string, string> = {
  'booking.launched': 'Launched',
  'booking.status-changed': 'Booking status changed',
  'line.queued': 'Queued',
  'line.claimed': 'Claimed',
  'line.started': 'Started',
  'line.confirmed': 'Confirmed',
  'line.rejected': 'Rejected',
  'line.resolved': 'Resolved from evidence',
  'line.marked-uncertain': 'Marked uncertain',
  'line.reconciliation-required': 'Handed to a person',
  'line.late-supplier-answer': 'Supplier answered late',
  'line.stopped': 'Stopped',
  'line.attempt-started': 'Supplier attempt started',
  'line.awaiting-staff': 'Handed to staff',
  'line.supplier-pending': 'Supplier still working on it',
  'line.pause-requested': 'Pause asked',
  'line.pause-started': 'Pause started',
  'line.paused': 'Paused',
  'line.pause-refused': 'Pause refused',
  'line.resume-requested': 'Resume asked',
  'line.resume-started': 'Resume started',
  'line.resumed': 'Resumed',
  'line.resume-refused': 'Resume refused',
  'line.stop-requested': 'Stop asked',
  'line.stop-started': 'Stop started',
  'line.stop-refused': 'Stop refused',
  'line.budget-change-requested': 'Budget change asked',
  'line.change-budget-started': 'Budget change started',
  'line.budget-changed': 'Budget changed',
  'line.change-budget-refused': 'Budget change refused',
  'amendment.applied': 'Amendment applied',
  'amendment.partially-applied': 'Amendment partly applied',
  'amendment.refused': 'Amendment refused',
  'amendment.reconciliation-required': 'Amendment in doubt',
};
const wordsOf = (action: string) => ACTION_WORDS[action] ?? action;

const whoOf = (e: BookingEvent) => `${esc(e.actorId)} (${esc(e.actor)}, ${esc(e.source)})`;

/** Words a person or supplier wrote, kept as written. */
const quote = (text: unknown) => `<blockquote>${esc(text)}</blockquote>`;

const FIELD_WORDS: Record<string, string> = {
  evidence: 'Evidence',
  reason: 'Reason',
  outcome: 'Outcome',
  providerReference: 'Provider reference',
  attemptId: 'Attempt',
  status: 'Status',
  adapterKey: 'Adapter',
  channel: 'Channel',
  executionMode: 'Execution mode',
  reservedMinor: 'Reserved (minor units)',
  snapshotDigest: 'Snapshot digest',
  browserEvidence: 'Browser evidence cited',
  lines: 'Lines',
};

/** What a person or supplier said, of an event's detail: the rest (statuses, ids) is the timeline's. */
const WORDS_KEYS = ['evidence', 'reason', 'outcome', 'providerReference', 'browserEvidence'];

/** An event's detail as a person reads it: fields in words, what people wrote quoted, a status change as one line, anything nested as JSON. */
export function detailHtml(detail: unknown, only?: readonly string[]): string {
  if (detail === undefined || detail === null) return '';
  if (typeof detail !== 'object' || Array.isArray(detail)) return quote(typeof detail === 'string' ? detail : JSON.stringify(detail));
  const { from, to, ...rest } = detail as Record<string, unknown>;
  const moved = to !== undefined && from !== to ? { status: `${String(from ?? '—')} → ${String(to)}` } : {};
  const entries = Object.entries({ ...moved, ...rest }).filter(([k]) => !only || only.includes(k));
  if (!entries.length) return '';
  return `<dl class="detail">${entries
    .map(([k, v]) => {
      const value =
        k === 'evidence' || k === 'reason'
          ? quote(v)
          : k === 'browserEvidence' && Array.isArray(v)
            ? citedHtml(v as CitedEvidence[])
            : v !== null && typeof v === 'object'
              ? json(v)
              : typeof v === 'string' && v.startsWith('att_')
                ? `<code>${esc(v)}</code>`
                : esc(v);
      return `<dt>${esc(FIELD_WORDS[k] ?? k)}</dt><dd>${value}</dd>`;
    })
    .join('')}</dl>`;
}

/** Cited browser evidence: the screenshot to open, where it was taken, and the digest that pins it. */
function citedHtml(cited: readonly CitedEvidence[]): string {
  return `<ul class="plain">${cited
    .map(
      (c) =>
        `<li><a href="/files/assets/${esc(c.screenshotSha256)}.png">Screenshot</a> of <code>${esc(c.finalUrl)}</code> (browser job <a href="#browser-job-${esc(c.browserJobId)}"><code>${esc(c.browserJobId.slice(0, 8))}</code></a>), evidence digest <code>${esc(c.evidenceDigest)}</code></li>`,
    )
    .join('')}</ul>`;
}

/** Events that say why a line is as it is: evidence typed by people, a supplier's reason, a person's outcome. */
const SAYS_WHY = (e: BookingEvent) => {
  const d = e.detail as Record<string, unknown> | undefined;
  return (
    e.action === 'line.late-supplier-answer' ||
    Boolean(d && (d.evidence !== undefined || d.reason !== undefined || d.outcome !== undefined))
  );
};
/** Events whose change writes the line's `evidence`. */
const WRITES_EVIDENCE = new Set(['line.confirmed', 'line.rejected', 'line.resolved', 'line.marked-uncertain']);

/**
 * Why a line is where it is, newest first, each with who and when: what staff and operators
 * typed (confirm, reject, uncertain, resolve), the supplier's reason, why the service handed
 * it to a person, and a supplier's late answer. The line's own `evidence` is shown with the
 * change that wrote it when no event carries it.
 */
export function evidenceTrail(b: Booking, l: Line, zone: string): string {
  const events = b.events.filter((e) => e.lineId === l.id).reverse();
  const said = events.filter(SAYS_WHY);
  const carried = said.some((e) => (e.detail as Record<string, unknown>).evidence === l.evidence);
  const items = said.map(
    (e) =>
      `<li><p class="who-when"><strong>${esc(wordsOf(e.action))}</strong> by ${whoOf(e)}, ${at(e.createdAt, zone)}</p>${
        e.action === 'line.late-supplier-answer' ? detailHtml(e.detail) : detailHtml(e.detail, WORDS_KEYS)
      }</li>`,
  );
  if (l.evidence && !carried) {
    const writer = events.find((e) => WRITES_EVIDENCE.has(e.action));
    items.unshift(
      `<li><p class="who-when"><strong>Evidence on the line</strong>${writer ? `, written by ${esc(wordsOf(writer.action).toLowerCase())}: ${whoOf(writer)}, ${at(writer.createdAt, zone)}` : ''}</p>${quote(l.evidence)}</li>`,
    );
  }
  const heading = `<h3 id="evidence-${esc(l.id)}">Evidence and reasons</h3>`;
  return items.length
    ? `${heading}<ol class="evidence" aria-labelledby="evidence-${esc(l.id)}">${items.join('')}</ol>`
    : `${heading}<p>Nothing recorded yet.</p>`;
}

/** The booking's history, newest first, naming each line as its section is headed, with each event's detail. */
export function timeline(b: Booking, zone: string, linkLines = true): string {
  const names = lineNames(b);
  const items = [...b.events].reverse().map((e) => {
    const name = e.lineId ? (names.get(e.lineId) ?? e.lineId) : null;
    const on = name ? ` on ${linkLines ? `<a href="#${lineAnchor(e.lineId!)}">${esc(name)}</a>` : esc(name)}` : '';
    const late = e.action === 'line.late-supplier-answer' ? ' <span class="badge warn">late supplier answer</span>' : '';
    return `<li><p class="who-when">${at(e.createdAt, zone)} · <strong>${esc(wordsOf(e.action))}</strong> <code>${esc(e.action)}</code>${on} by ${whoOf(e)}${late}</p>${detailHtml(e.detail)}</li>`;
  });
  return `<h2 id="events-heading">Events, newest first</h2><ol class="timeline" aria-labelledby="events-heading">${items.join('')}</ol>`;
}

/**
 * A line's place on a booking page, lines needing a person first: reconciliation; the viewer's
 * own open work; open work nobody has claimed; other open lines; then what is settled. Within
 * each, the plan's order.
 */
export function attentionRank(l: Line, viewerId: string): number {
  if (l.status === 'reconciliation-required') return 0;
  // Open: in a status someone still acts on, or with a change in hand (a budget change keeps the line's status).
  const open = ['queued', 'in-progress', 'stop-requested', 'stopping'].includes(l.status) || (l.pendingOperation ?? null) !== null;
  if (open && l.executionMethod !== null && l.claimedBy === viewerId) return 1;
  if (open && l.executionMethod !== null && !l.claimedBy) return 2;
  if (open) return 3;
  return 4;
}

export const byAttention = (lines: readonly Line[], viewerId: string): Line[] =>
  lines
    .map((l, i) => ({ l, i }))
    .sort((a, b) => attentionRank(a.l, viewerId) - attentionRank(b.l, viewerId) || a.i - b.i)
    .map((x) => x.l);

const VERIFICATION_WORDS: Record<string, string> = {
  pending: 'waiting for the supplier’s delivery after it to prove it',
  verified: 'proven by the supplier’s delivery after it',
  failed: 'contradicted by what the supplier said since',
  superseded: 'resumed before a full day could prove it',
};

/**
 * Whether the line's latest pause, stop or budget change is proven by what the supplier said
 * since (docs/bookings.md, "Verified control"): the state, why it failed and what was spent, and
 * what a person must still do at the supplier.
 */
export function verificationHtml(l: Line, currency: string): string {
  const v = l.verification;
  if (!v) return '';
  const e = (v.evidence ?? {}) as { reason?: string; spentMinor?: number; drift?: string[] };
  const why =
    v.state === 'failed'
      ? `: ${esc(e.reason ?? '')}${e.drift?.length ? ` (${esc(e.drift.join('; '))})` : ''}${
          typeof e.spentMinor === 'number' ? `, ${esc((e.spentMinor / 100).toFixed(2))} ${esc(currency)} spent` : ''
        }`
      : '';
  const next =
    v.state === 'failed'
      ? ' Next: find out at the supplier and resolve the line from that evidence (applied, or not applied: the line is back as it was before the change), stop the line (the stop is asked of the supplier again and verified in turn), or end it at the supplier by hand.'
      : '';
  const followUp = !v.followUp
    ? ''
    : v.followUpDone
      ? ` <span data-follow-up="done">Done at the supplier by hand: ${esc(v.followUp)} (recorded by ${esc(v.followUpDone.by)}).</span>`
      : ` <strong data-follow-up="open">${esc(v.followUp)}</strong>`;
  return `<p class="note${v.state === 'failed' ? ' attention' : ''}" data-verification="${esc(v.state)}">The ${esc(v.operation)}: ${esc(
    VERIFICATION_WORDS[v.state] ?? v.state,
  )}${why}.${next}${followUp}</p>`;
}
