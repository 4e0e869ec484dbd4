import type { Booking } from '../../../shared/bookings/booking-schemas';
import type { ConsoleRequest } from '../context';
import { esc, layout } from '../html';
import { lineNames, statusBadge } from './lines';
import { bookingPath, due, operationWords } from './staff-booking';

export const FILTERS = ['status', 'assignee', 'advertiserId', 'adapterKey', 'overdue', 'limit', 'cursor'] as const;
export const needsAttention = (b: Booking) => b.overdue || b.lines.some((l) => l.status === 'reconciliation-required');

/** Who has each line: its claimer, nobody yet (a workflow line), or its supplier adapter. */
function linesCell(b: Booking): string {
  const names = lineNames(b);
  return `<ul class="plain">${b.lines
    .map((l) => {
      const who =
        l.executionMethod === null
          ? 'run by its supplier adapter'
          : l.claimedBy
            ? `claimed by <strong data-claimed-by>${esc(l.claimedBy)}</strong>`
            : '<em>unclaimed</em>';
      // A change asked after the booking, named: for staff to apply on a workflow line, with the supplier otherwise.
      const change =
        l.pendingOperation && l.pendingOperation !== 'book'
          ? ` · <span data-line-operation>${esc(operationWords(l.pendingOperation))}</span> ${l.executionMethod === null ? 'with its supplier' : 'for staff'}`
          : '';
      return `<li>${esc(names.get(l.id))} ${statusBadge(l.status)} · ${who}${change}</li>`;
    })
    .join('')}</ul>`;
}

/** Why a booking is urgent, in words: lines to reconcile, and how overdue it is. */
function whyUrgent(b: Booking, zone: string): string {
  const doubtful = b.lines.filter((l) => l.status === 'reconciliation-required');
  const n = doubtful.length;
  // The changes in doubt, named (a booking in doubt is what "to reconcile" has always meant).
  const changes = [...new Set(doubtful.map((l) => operationWords(l.pendingOperation)).filter((w) => w !== 'booking'))];
  return [
    n ? `${n} line${n === 1 ? '' : 's'} to reconcile${changes.length ? ` (${esc(changes.join(', '))})` : ''}` : '',
    b.overdue ? `confirmation ${due(b, zone)}` : '',
  ]
    .filter(Boolean)
    .join('; ');
}

export function queuePage(
  r: ConsoleRequest,
  query: Record<string, string>,
  page: { bookings: Booking[]; nextCursor: string | null },
  attention: Booking[],
): string {
  const zone = r.viewer.timeZone;
  // Within the page the queue's own order holds, except that what needs a person now comes first.
  const rows = [...page.bookings].sort((a, b) => Number(needsAttention(b)) - Number(needsAttention(a)));
  const select = (name: string, label: string, options: string[]) =>
    `<label>${label} <select name="${name}">${options
      .map((o) => `<option value="${esc(o)}"${query[name] === o ? ' selected' : ''}>${esc(o || 'any')}</option>`)
      .join('')}</select></label>`;
  const filters = `<form method="get" action="/console/fulfilment" class="filters"><fieldset><legend>Filters</legend>
${select('status', 'Status', ['active', 'all'])}${select('assignee', 'Assignee', ['all', 'me', 'unassigned'])}
${select('overdue', 'Overdue', ['', 'true', 'false'])}
<label>Client (advertiser id) <input name="advertiserId" value="${esc(query.advertiserId)}" maxlength="200"></label>
<label>Supplier adapter <input name="adapterKey" value="${esc(query.adapterKey)}" maxlength="200"></label>
<label>Per page <input name="limit" type="number" min="1" max="100" value="${esc(query.limit ?? '50')}"></label>
<button type="submit">Apply</button></fieldset></form>`;
  const table = rows.length
    ? `<table><caption class="skip">Bookings</caption><thead><tr><th scope="col">Booking</th><th scope="col">Client</th><th scope="col">Campaign</th>
<th scope="col">Status</th><th scope="col">Lines and who has them</th><th scope="col">Confirmation due</th></tr></thead><tbody>${rows
        .map(
          (b) => `<tr${needsAttention(b) ? ' class="attention"' : ''}><td><a href="${bookingPath(esc(b.id))}">${esc(b.id.slice(0, 8))}</a>
${needsAttention(b) ? '<span class="badge warn">needs attention</span>' : ''}</td><td>${esc(b.client.name)} <code>${esc(b.advertiserId)}</code></td>
<td>${esc(b.campaignName)}</td><td>${statusBadge(b.status)}</td><td>${linesCell(b)}</td><td>${due(b, zone)}</td></tr>`,
        )
        .join('')}</tbody></table>`
    : '<p>No bookings match.</p>';
  const next = page.nextCursor
    ? `<p><a href="/console/fulfilment?${new URLSearchParams({ ...query, cursor: page.nextCursor }).toString()}">Next page</a></p>`
    : '';
  // Across every page: what needs a person now, so nothing urgent waits on a later page.
  const count = attention.length;
  const urgent = `<section aria-labelledby="attention-heading"><h2 id="attention-heading">Needs attention now</h2>
<p data-urgent-count>${count === 0 ? 'Nothing urgent: no line to reconcile and nothing overdue.' : `<strong>${count}</strong> booking${count === 1 ? '' : 's'} of your clients need${count === 1 ? 's' : ''} a person now${count >= 50 ? ' (the 50 most overdue are listed)' : ''}.`}</p>
${
  count
    ? `<ul>${attention
        .map(
          (b) =>
            `<li><a href="${bookingPath(esc(b.id))}">${esc(b.id.slice(0, 8))}</a> ${esc(b.client.name)}, ${esc(b.campaignName)}: ${whyUrgent(b, zone)}</li>`,
        )
        .join('')}</ul>`
    : ''
}</section>`;
  return layout(
    count ? `Fulfilment queue (${count} need${count === 1 ? 's' : ''} attention)` : 'Fulfilment queue',
    urgent + filters + table + next,
    r.viewer,
    r.flash,
  );
}
