import { addDays, daysFrom } from '../../../shared/dates';
import type { LineDelivery } from '../../../shared/delivery/campaign-delivery';
import { esc } from '../html';

const W = 640;
const H = 180;
const PAD = { left: 56, right: 12, top: 12, bottom: 28 };

/**
 * A line's cumulative spend against the even-pacing expectation and its budget, day by day over the
 * range, then its outlook to the flight's end: the projected spend with its interval shaded (it
 * widens from the last reported day to the flight's last), as inline SVG (the console runs no
 * script). Presentation attributes only, no style attributes.
 */
export function spendChart(
  line: LineDelivery,
  flight: { startDate: string; endDate: string },
  range: { from: string; to: string },
): string {
  // The projection runs to the flight's end, past the range when the range ends before it.
  const to = range.to < flight.endDate ? flight.endDate : range.to;
  const days = daysFrom(range.from, to) + 1;
  const flightDays = daysFrom(flight.startDate, flight.endDate) + 1;
  const byDate = new Map(line.days.map((d) => [d.date, d.spendMinor]));
  // Cumulative over the whole flight up to each day: what came before the range counts too.
  const before = line.deliveredSpendMinor - line.days.reduce((s, d) => s + d.spendMinor, 0);
  let running = Math.max(0, before);
  const actual: Array<[number, number]> = [];
  let last: [number, number] | null = null;
  const expected: Array<[number, number]> = [];
  for (let i = 0; i < days; i++) {
    const date = addDays(range.from, i);
    running += byDate.get(date) ?? 0;
    if (byDate.has(date) && date <= range.to) {
      actual.push([i, running]);
      last = [i, running];
    }
    const elapsed = Math.min(Math.max(daysFrom(flight.startDate, date) + 1, 0), flightDays);
    expected.push([i, Math.round((line.budgetMinor * elapsed) / flightDays)]);
  }
  const o = line.outlook;
  const end = daysFrom(range.from, flight.endDate);
  const start: [number, number] = last ?? [Math.max(0, daysFrom(range.from, flight.startDate) - 1), Math.max(0, before)];
  const showOutlook = o.daysRemaining > 0 && end >= 0 && end > start[0];
  const top = Math.max(line.budgetMinor, running, o.spend.highMinor ?? 0, o.spend.projectedMinor, 1);
  const x = (i: number) => PAD.left + (days <= 1 ? 0 : (i / (days - 1)) * (W - PAD.left - PAD.right));
  const y = (v: number) => PAD.top + (1 - v / top) * (H - PAD.top - PAD.bottom);
  const points = (xs: Array<[number, number]>) => xs.map(([i, v]) => `${x(i).toFixed(1)},${y(v).toFixed(1)}`).join(' ');
  const label = `Cumulative spend of ${line.channel} line against the expected even pace and its budget, ${range.from} to ${to}, with its projection to the flight's end`;
  const band =
    showOutlook && o.spend.lowMinor !== null && o.spend.highMinor !== null
      ? `<polygon points="${points([start, [end, o.spend.highMinor], [end, o.spend.lowMinor]])}" fill="#0b4f9c" fill-opacity="0.18" stroke="none" data-series="interval"/>`
      : '';
  const projected = showOutlook
    ? `<polyline points="${points([start, [end, o.spend.projectedMinor]])}" fill="none" stroke="#0b4f9c" stroke-width="2" stroke-dasharray="2 3" data-series="projected"/>`
    : '';
  return `<figure><svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 ${W} ${H}" width="100%" role="img" aria-label="${esc(label)}">
<title>${esc(label)}</title>
<line x1="${PAD.left}" y1="${y(0)}" x2="${W - PAD.right}" y2="${y(0)}" stroke="#6b7785"/>
<line x1="${PAD.left}" y1="${PAD.top}" x2="${PAD.left}" y2="${y(0)}" stroke="#6b7785"/>
<text x="${PAD.left - 6}" y="${PAD.top + 10}" text-anchor="end" font-size="11">${esc((top / 100).toFixed(0))}</text>
<text x="${PAD.left - 6}" y="${y(0)}" text-anchor="end" font-size="11">0</text>
<text x="${PAD.left}" y="${H - 8}" font-size="11">${esc(range.from)}</text>
<text x="${W - PAD.right}" y="${H - 8}" text-anchor="end" font-size="11">${esc(to)}</text>
<line x1="${PAD.left}" y1="${y(line.budgetMinor).toFixed(1)}" x2="${W - PAD.right}" y2="${y(line.budgetMinor).toFixed(1)}" stroke="#a33" stroke-width="1" data-series="budget"/>
${band}${projected}
<polyline points="${points(expected)}" fill="none" stroke="#6b7785" stroke-width="2" stroke-dasharray="6 4" data-series="expected"/>
<polyline points="${points(actual)}" fill="none" stroke="#0b4f9c" stroke-width="2.5" data-series="spend"/>
</svg><figcaption>Solid: cumulative spend (GBP). Dashed: expected at an even pace. Red: the budget. Dotted: projected to the flight's end (${esc(o.classification)}${o.exhaustionDate ? `, budget spent by ${esc(o.exhaustionDate)}` : ''}), the shaded band its ${esc(Math.round(o.level * 100))}% interval.</figcaption></figure>`;
}
