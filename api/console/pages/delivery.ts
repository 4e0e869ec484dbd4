import { deliveryCsv, type CampaignDelivery } from '../../../shared/delivery/campaign-delivery';
import type { ConsoleRequest } from '../context';
import { esc, layout, money } from '../html';
import type { PageRegistrar } from '../routing';
import { at } from '../time';
import { spendChart } from '../views/delivery-chart';

const STATUS_CLASS: Record<string, string> = {
  'on-track': 'ok',
  under: 'attention',
  over: 'bad',
  'under-delivery': 'attention',
  'early-exhaustion': 'bad',
};

/** A line's or the campaign's outlook: projected spend, its interval, its classification. */
function outlookCell(o: {
  spend: { projectedMinor: number; lowMinor: number | null; highMinor: number | null };
  classification: string;
  exhaustionDate: string | null;
}): string {
  const interval =
    o.spend.lowMinor !== null && o.spend.highMinor !== null ? ` (${money(o.spend.lowMinor)} to ${money(o.spend.highMinor)})` : '';
  const when = o.exhaustionDate ? ` by ${esc(o.exhaustionDate)}` : '';
  return `${money(o.spend.projectedMinor)}${interval} <span class="status ${STATUS_CLASS[o.classification]}">${esc(o.classification)}${when}</span>`;
}

const rangeArgs = (q: Record<string, unknown>) =>
  Object.fromEntries(['from', 'to'].flatMap((k) => (typeof q[k] === 'string' && q[k] !== '' ? [[k, q[k]]] : [])));

async function read(r: ConsoleRequest, id: string, q: Record<string, unknown>) {
  const body = (await r.call('getCampaignDelivery', { id, ...rangeArgs(q) })) as unknown as { delivery: CampaignDelivery };
  const campaign = (await r.call('getCampaign', { id })) as unknown as { campaign: { name: string; startDate: string; endDate: string } };
  return { d: body.delivery, campaign: campaign.campaign };
}

function page(r: ConsoleRequest, d: CampaignDelivery, campaign: { name: string; startDate: string; endDate: string }): string {
  const z = r.viewer.timeZone;
  const csv = `/console/campaigns/${d.campaignId}/delivery.csv?from=${d.range.from}&to=${d.range.to}`;
  const rows = d.lines
    .map((l) => {
      const age = l.fetchedAt
        ? `${at(l.fetchedAt, z)}${l.stale ? ` <span class="status bad">late: ${esc(l.lastError ?? 'supplier unavailable')}</span>` : ''}`
        : '—';
      return `<tr><td>${esc(l.channel)} · ${esc(l.adapterKey)}</td><td>${money(l.spendMinor)}</td><td>${money(l.deliveredSpendMinor)} of ${money(l.budgetMinor)}${l.overDeliveredMinor > 0 ? ` <span class="status bad">over by ${money(l.overDeliveredMinor)}, not billed</span>` : ''}${l.dailyCapMinor !== null ? ` <span>cap ${money(l.dailyCapMinor)} a day (UTC)</span>` : ''}${l.overCapMinor > 0 ? ` <span class="status attention">${money(l.overCapMinor)} past the daily cap (reported late)</span>` : ''}</td>
<td>${money(l.pacing.expectedSpendMinor)}</td><td><span class="status ${STATUS_CLASS[l.pacing.status]}">${esc(l.pacing.status)}</span> ${l.pacing.ratio === null ? '' : esc(l.pacing.ratio.toFixed(2))}</td>
<td>${outlookCell(l.outlook)}</td><td>${esc(l.impressions)}</td><td>${esc(l.clicks)}</td><td>${esc(l.completions)}</td><td>${age}</td></tr>`;
    })
    .join('');
  const charts = d.lines
    .map((l) => `<section class="line"><h2>${esc(l.channel)} · ${esc(l.adapterKey)}</h2>${spendChart(l, campaign, d.range)}</section>`)
    .join('');
  const body = `<p>${esc(campaign.name)}: flight ${esc(campaign.startDate)} to ${esc(campaign.endDate)}; today is ${esc(d.today)} on this campaign's clock.</p>
<form method="get" class="filters"><fieldset><legend>Range</legend><label for="from">From</label><input id="from" name="from" type="date" value="${esc(d.range.from)}">
<label for="to">To</label><input id="to" name="to" type="date" value="${esc(d.range.to)}"><button type="submit">Show</button></fieldset></form>
<p><a href="${esc(csv)}">Download CSV</a> (one row per line and day)</p>
<table><caption>Delivery by line</caption><thead><tr><th scope="col">Line</th><th scope="col">Spend in range</th><th scope="col">Delivered</th><th scope="col">Expected</th><th scope="col">Pacing</th><th scope="col">Outlook at the flight's end</th><th scope="col">Impressions</th><th scope="col">Clicks</th><th scope="col">Completions</th><th scope="col">Figures from</th></tr></thead>
<tbody>${rows || '<tr><td colspan="10">No line has run yet.</td></tr>'}</tbody>
<tfoot><tr><th scope="row">All lines</th><td>${money(d.totals.spendMinor)}</td><td>${money(d.totals.deliveredSpendMinor)} of ${money(d.totals.budgetMinor)}</td><td>${money(d.totals.expectedSpendMinor)}</td><td></td><td>${outlookCell(d.outlook)}</td><td>${esc(d.totals.impressions)}</td><td>${esc(d.totals.clicks)}</td><td>${esc(d.totals.completions)}</td><td></td></tr></tfoot></table>
${charts}`;
  return layout('Campaign delivery', body, r.viewer, r.flash);
}

/** A campaign's delivery and pacing, with a chart per line and the CSV export, for anyone who may see the campaign. */
export const deliveryPages: PageRegistrar = (_router, { get }) => {
  get('/console/campaigns/:id/delivery', async (r, req, res) => {
    const { d, campaign } = await read(r, String(req.params.id), req.query as Record<string, unknown>);
    res.type('html').send(page(r, d, campaign));
  });
  get('/console/campaigns/:id/delivery.csv', async (r, req, res) => {
    const { d } = await read(r, String(req.params.id), req.query as Record<string, unknown>);
    res
      .type('text/csv; charset=utf-8')
      .setHeader('content-disposition', `attachment; filename="delivery-${d.campaignId}.csv"`)
      .send(deliveryCsv(d));
  });
};
