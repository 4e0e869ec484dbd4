import type { Booking } from '../../../shared/bookings/booking-schemas';
import type { BrowserJob } from '../../../shared/bookings/browser-job-schemas';
import type { ConsoleRequest } from '../context';
import { FormFill } from '../forms';
import { esc, postForm } from '../html';
import { at } from '../time';
import { statusBadge, type Line } from './lines';

const short = (digest: string) => `${digest.slice(0, 12)}…`;

/** What a completed job brought back: the screenshot as a picture beside what it says (and for `prepare`, what to enter where). */
function evidenceOf(j: BrowserJob, zone: string): string {
  const e = j.evidence!;
  const alt = `Screenshot of ${e.finalUrl}, ${new Date(e.observedAt).toISOString()}`;
  const refused = e.requests.refused.length
    ? `<details><summary>${e.requests.refused.length} request(s) refused</summary><ul>${e.requests.refused
        .map((r) => `<li><code>${esc(r.method)} ${esc(r.url)}</code>: ${esc(r.reason)}</li>`)
        .join('')}</ul></details>`
    : '<p>Nothing the page tried was refused.</p>';
  const worksheet = e.worksheet
    ? `<table><caption>What to enter where (from the approved snapshot; nothing was entered)</caption>
<thead><tr><th scope="col">Detail</th><th scope="col">Value</th><th scope="col">Field on the page</th></tr></thead><tbody>${e.worksheet.rows
        .map(
          (r) =>
            `<tr><th scope="row">${esc(r.detail)}</th><td><code>${esc(r.value)}</code></td><td>${r.field ? esc(r.field) : '<span class="who-when">no field found</span>'}</td></tr>`,
        )
        .join('')}</tbody></table>`
    : '';
  return `<div class="evidence-pair"><figure><a href="${esc(e.screenshot.url)}"><img src="${esc(e.screenshot.url)}" alt="${esc(alt)}" width="${esc(Math.min(e.screenshot.width, 640))}" loading="lazy" data-evidence-screenshot></a>
<figcaption>${e.screenshot.truncated ? 'The top of the page (it is taller than a screenshot keeps). ' : ''}Full size: select the picture.</figcaption></figure>
<div>${worksheet}<dl class="detail">
<dt>Final address</dt><dd><code data-final-url>${esc(e.finalUrl)}</code></dd>
<dt>HTTP status</dt><dd data-http-status>${esc(e.httpStatus ?? '—')}</dd>
<dt>Title</dt><dd>${esc(e.title || '—')}</dd>
<dt>Observed</dt><dd>${at(e.observedAt, zone)}</dd>
<dt>Screenshot SHA-256</dt><dd><code>${esc(e.screenshot.sha256)}</code></dd>
<dt>Visible text</dt><dd><a href="${esc(e.text.url)}">${esc(e.text.characters)} characters</a>${e.text.truncated ? ' (truncated)' : ''}, SHA-256 <code>${esc(e.text.sha256)}</code></dd>
${e.worksheet ? `<dt>Worksheet SHA-256</dt><dd><code>${esc(e.worksheet.sha256)}</code></dd>` : ''}
<dt>Evidence digest</dt><dd><code data-evidence-digest>${esc(e.digest)}</code></dd>
<dt>Requests</dt><dd>${esc(e.requests.made)} made, ${esc(e.requests.bytes)} bytes received</dd>
</dl>${refused}</div></div>`;
}

function jobItem(j: BrowserJob, lineName: string, zone: string): string {
  const times = [
    `asked ${at(j.createdAt, zone)} by ${esc(j.requestedBy)}`,
    j.startedAt ? `started ${at(j.startedAt, zone)}` : '',
    j.finishedAt ? `ended ${at(j.finishedAt, zone)}` : '',
  ]
    .filter(Boolean)
    .join(' · ');
  const failure = j.failure
    ? `<p class="note"><strong>Failed: <code>${esc(j.failure.code)}</code></strong> ${esc(j.failure.reason)}</p>`
    : '';
  return `<li id="browser-job-${esc(j.id)}" data-browser-job="${esc(j.id)}"><h3>${esc(j.purpose === 'prepare' ? 'Prepare' : 'Observe')} · ${esc(lineName)} ${statusBadge(j.status, 'data-browser-job-status')}</h3>
<p><code>${esc(j.supplierUrl)}</code></p><p class="who-when">${times}. Snapshot <code>${esc(short(j.snapshotDigest))}</code>, job <code>${esc(j.id)}</code>.</p>
${failure}${j.status === 'completed' && j.evidence ? evidenceOf(j, zone) : ''}</li>`;
}

/**
 * The booking's browser jobs, newest first, and the form to ask for one. A job opens the page in
 * a supervised, read-only browser and brings back evidence; it submits nothing and buys nothing.
 */
export function browserJobsSection(
  r: ConsoleRequest,
  b: Booking,
  jobs: readonly BrowserJob[],
  names: Map<string, string>,
  action: string,
): string {
  const v = r.viewer;
  const list = jobs.length
    ? `<ol class="timeline browser-jobs">${jobs.map((j) => jobItem(j, names.get(j.lineId) ?? j.lineId, v.timeZone)).join('')}</ol>`
    : '<p>None asked for yet.</p>';
  const form = new FormFill(r.draft, action);
  return `<h2 id="browser-jobs-heading">Browser jobs</h2>
<p class="note">A browser job opens a supplier's page in a supervised, read-only browser and brings back evidence: a full-page
screenshot, the visible text, the final address and status, each with its SHA-256. <strong>Observe</strong> opens an official public
source; <strong>prepare</strong> opens the supplier's page for a line you have claimed and started, with the approved details beside it.
Nothing is ever submitted, typed or bought. A job is bound to the approved snapshot
<code data-snapshot-digest>${esc(b.snapshotDigest)}</code>: if the booking's snapshot differs, it is refused, and if the line changes
before the job runs, the job is refused then.</p>
${postForm(
  v,
  form.action,
  { expectedSnapshotDigest: b.snapshotDigest },
  `<fieldset><legend>Ask for a browser job</legend>
${form.select({ id: 'bj-line', name: 'channelCampaignId', required: true, options: b.lines.map((l) => [l.channelCampaignId, names.get(l.id)!]) })}
${form.select({
  id: 'bj-purpose',
  name: 'purpose',
  required: true,
  options: [
    ['observe', 'observe an official public source'],
    ['prepare', 'prepare my started computer-use line'],
  ],
})}
${form.input({ id: 'bj-url', name: 'supplierUrl', type: 'url', required: true, attrs: 'maxlength="2000" size="60"' })}
${form.checkbox({ id: 'bj-ro', name: 'readOnlyConfirmed', value: 'true', required: true, label: 'I confirm this is read-only' })}
<button type="submit">Queue browser job</button></fieldset>`,
)}
${list}`;
}

/** Completed jobs of a line, offered as evidence to cite when the line is confirmed, rejected or resolved. */
export function citeEvidence(l: Line, jobs: readonly BrowserJob[], idPrefix: string, zone: string): string {
  const done = jobs.filter((j) => j.lineId === l.id && j.status === 'completed' && j.evidence);
  if (!done.length) return '';
  return `<fieldset><legend>Cite browser evidence (optional)</legend>${done
    .map(
      (j) =>
        `<label><input type="checkbox" id="${esc(`${idPrefix}-${j.id}`)}" name="browserJobIds" value="${esc(j.id)}"> ${esc(j.purpose)} ${at(j.evidence!.observedAt, zone)}: <code>${esc(j.evidence!.finalUrl)}</code> (evidence <code>${esc(short(j.evidence!.digest))}</code>)</label>`,
    )
    .join('')}</fieldset>`;
}
