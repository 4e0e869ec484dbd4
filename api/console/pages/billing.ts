import { statementCsv, type Statement } from '../../../shared/reconciliation/statement';
import type { InvoiceLineView, InvoiceView } from '../../../shared/reconciliation/reconciliation-views';
import type { Discrepancy } from '../../../shared/delivery/discrepancies';
import type { MakegoodView } from '../../../shared/delivery/makegoods';
import type { ReconciliationFigures } from '../../../shared/reporting/reconciliation-figures';
import { FormFill } from '../forms';
import { esc, layout, money, postForm } from '../html';
import { formInt, type PageRegistrar } from '../routing';

const STATUS: Record<string, string> = {
  approved: 'ok',
  disputed: 'attention',
  resolved: 'neutral',
  owed: 'open',
  fulfilled: 'ok',
  expired: 'bad',
};
const badge = (s: string) => `<span class="status ${STATUS[s] ?? 'neutral'}">${esc(s)}</span>`;
const pct = (v: number | null) => (v === null ? '—' : `${v.toFixed(2)}%`);
const thisMonth = () => new Date().toISOString().slice(0, 7);
const PRINT = '<style>@media print{header,form,nav,.noprint{display:none}main{max-width:none}}</style>';

/** Reconciliation in the console (docs/console.md): what needs a person, invoices, make-goods, statements. */
export const billingPages: PageRegistrar = (_router, { get, post }) => {
  get('/console/billing', async (r, req, res) => {
    const period = typeof req.query.period === 'string' && /^\d{4}-\d{2}$/.test(req.query.period) ? req.query.period : thisMonth();
    const overview = (await r.call('workspaceOverview', {})) as { overview: { reconciliation: ReconciliationFigures } };
    const f = overview.overview.reconciliation;
    const { invoices } = (await r.call('listInvoices', {})) as unknown as { invoices: InvoiceView[] };
    const { discrepancies } = (await r.call('listDeliveryDiscrepancies', { status: 'open' })) as unknown as {
      discrepancies: Discrepancy[];
    };
    const { makegoods } = (await r.call('listMakegoods', {})) as unknown as { makegoods: MakegoodView[] };
    const fill = (action: string) => new FormFill(r.draft, action);
    const attention = `<section aria-labelledby="attention-heading"><h2 id="attention-heading">Needs attention now</h2><ul>
<li>${f.disputedLines} disputed invoice line(s), ${money(f.atStakeMinor)} at stake</li>
<li>${f.openDiscrepancies} final day(s) restated by a seller</li>
<li>${f.makegoodsExpired} make-good(s) expired unmet; ${f.makegoodsOwed.count} owed (${esc(f.makegoodsOwed.impressions)} impressions to go)</li></ul></section>`;
    const disc = discrepancies.length
      ? `<table><caption>Restated final days (the final figure stands)</caption><thead><tr><th scope="col">Seller</th><th scope="col">Day</th><th scope="col">Line</th><th scope="col">Final spend</th><th scope="col">Reported spend</th><th scope="col">Final / reported impressions</th><th scope="col">Take it up</th></tr></thead><tbody>${discrepancies
          .map((d) => {
            const action = `/console/billing/discrepancies/${d.id}/acknowledge`;
            return `<tr class="attention"><td>${esc(d.seller)}</td><td>${esc(d.day)}</td><td><code>${esc(d.lineId.slice(0, 8))}</code></td><td>${money(d.final.spendMinor)}</td><td>${money(d.reported.spendMinor)}</td><td>${esc(d.final.impressions)} / ${esc(d.reported.impressions)}</td>
<td>${postForm(r.viewer, action, {}, `${fill(action).input({ id: `note-${d.id}`, name: 'note', label: 'Note', required: true, attrs: 'maxlength="2000"' })} <button type="submit">Acknowledge</button>`, 'inline')}</td></tr>`;
          })
          .join('')}</tbody></table>`
      : '<p>No restated final day is waiting.</p>';
    const inv = invoices.length
      ? `<table><caption>Invoices</caption><thead><tr><th scope="col">Invoice</th><th scope="col">Seller</th><th scope="col">Month</th><th scope="col">Status</th><th scope="col">Invoiced</th><th scope="col">Final</th><th scope="col">Variance</th><th scope="col">Lines (approved / disputed / resolved)</th></tr></thead><tbody>${invoices
          .map(
            (i) =>
              `<tr${i.status === 'disputed' ? ' class="attention"' : ''}><td><a href="/console/billing/invoices/${esc(i.id)}">${esc(i.invoiceNumber)}</a></td><td>${esc(i.seller)}</td><td><a href="/console/billing/statements/${esc(i.seller)}/${esc(i.period)}">${esc(i.period)}</a></td><td>${badge(i.status)}</td><td>${money(i.invoicedMinor)}</td><td>${money(i.finalMinor)}</td><td>${money(i.varianceMinor)} (${pct(i.variancePercent)})</td><td>${i.counts.approved} / ${i.counts.disputed} / ${i.counts.resolved}</td></tr>`,
          )
          .join('')}</tbody></table>`
      : '<p>No invoice imported yet (POST /api/v1/billing/invoices).</p>';
    const goods = makegoods.length
      ? `<table><caption>Make-goods</caption><thead><tr><th scope="col">Seller</th><th scope="col">Line</th><th scope="col">Owed</th><th scope="col">Delivered at no cost</th><th scope="col">Due by</th><th scope="col">Status</th></tr></thead><tbody>${makegoods
          .map(
            (m) =>
              `<tr${m.status === 'expired' ? ' class="attention"' : ''}><td>${esc(m.seller)}</td><td><code>${esc(m.lineId.slice(0, 8))}</code></td><td>${esc(m.owedImpressions)}</td><td>${esc(m.deliveredImpressions)}</td><td>${esc(m.dueBy)}</td><td>${badge(m.status)}</td></tr>`,
          )
          .join('')}</tbody></table>`
      : '';
    const picker = `<form method="get" action="/console/billing/statement" class="filters"><fieldset><legend>A seller's statement</legend>
<label for="seller">Seller (adapter key)</label><input id="seller" name="seller" required value="sandbox-ctv">
<label for="period">Month</label><input id="period" name="period" required pattern="\\d{4}-\\d{2}" value="${esc(period)}"><button type="submit">Show</button></fieldset></form>`;
    res.type('html').send(layout('Billing and reconciliation', `${attention}${picker}${inv}${disc}${goods}`, r.viewer, r.flash));
  });

  get('/console/billing/statement', async (_r, req, res) => {
    res.redirect(
      303,
      `/console/billing/statements/${encodeURIComponent(String(req.query.seller ?? ''))}/${encodeURIComponent(String(req.query.period ?? ''))}`,
    );
  });

  // Before the page's route, which would take `….csv` for a month.
  get('/console/billing/statements/:seller/:period.csv', async (r, req, res) => {
    const { statement } = (await r.call('getSellerStatement', {
      seller: req.params.seller,
      period: req.params.period,
      limit: 10_000,
    })) as unknown as {
      statement: Statement;
    };
    res
      .type('text/csv; charset=utf-8')
      .setHeader('content-disposition', `attachment; filename="statement-${statement.seller}-${statement.period}.csv"`)
      .send(statementCsv(statement));
  });

  get('/console/billing/statements/:seller/:period', async (r, req, res) => {
    const { statement: s } = (await r.call('getSellerStatement', {
      seller: req.params.seller,
      period: req.params.period,
      limit: 10_000,
    })) as unknown as {
      statement: Statement;
    };
    const rows = s.lines
      .map(
        (l) =>
          `<tr><td>${esc(l.campaignName)}</td><td>${esc(l.channel)} · <code>${esc(l.lineId.slice(0, 8))}</code>${l.executionMode === 'sandbox' ? ' (sandbox)' : ''}</td><td>${money(l.budgetMinor)}</td><td>${money(l.finalSpendMinor)}</td><td>${money(l.provisionalSpendMinor)}</td><td>${money(l.billableMinor)}</td><td>${money(l.capturedMinor)}</td><td>${money(l.feesMinor)}</td><td>${l.monthClosed ? 'final' : 'open'}</td><td>${l.invoice ? `${esc(l.invoice.invoiceNumber)} ${badge(l.invoice.status)}` : '—'}</td></tr>`,
      )
      .join('');
    const t = s.totals;
    const csv = `/console/billing/statements/${esc(s.seller)}/${esc(s.period)}.csv`;
    const body = `${PRINT}<p>${esc(s.seller)}, ${esc(s.from)} to ${esc(s.to)}. ${t.closedLines} of ${t.lines} line(s) final for the month. Amounts in ${esc(s.currency)}.</p>
<p class="noprint"><a href="${csv}">Download CSV</a> · print this page for a paper statement.</p>
<table><caption>Statement</caption><thead><tr><th scope="col">Campaign</th><th scope="col">Line</th><th scope="col">Budget</th><th scope="col">Delivered, final</th><th scope="col">Delivered, provisional</th><th scope="col">Billable</th><th scope="col">Captured</th><th scope="col">Fees</th><th scope="col">Month</th><th scope="col">Invoice</th></tr></thead>
<tbody>${rows || '<tr><td colspan="10">No line of this seller ran in this month.</td></tr>'}</tbody>
<tfoot><tr><th scope="row" colspan="2">Total</th><td>${money(t.budgetMinor)}</td><td>${money(t.finalSpendMinor)}</td><td>${money(t.provisionalSpendMinor)}</td><td>${money(t.billableMinor)}</td><td>${money(t.capturedMinor)}</td><td>${money(t.feesMinor)}</td><td></td><td>${money(t.invoicedMinor)} invoiced</td></tr></tfoot></table>`;
    res.type('html').send(layout(`Statement ${s.seller} ${s.period}`, body, r.viewer, r.flash));
  });

  get('/console/billing/invoices/:id', async (r, req, res) => {
    const { invoice, lines } = (await r.call('getInvoice', { id: req.params.id })) as unknown as {
      invoice: InvoiceView;
      lines: InvoiceLineView[];
    };
    const form = (l: InvoiceLineView) => {
      const action = `/console/billing/invoices/${invoice.id}/lines/${l.id}/resolve`;
      const f = new FormFill(r.draft, action);
      return postForm(
        r.viewer,
        action,
        { expectedVersion: l.version },
        `<fieldset><legend>Resolve row ${l.row}</legend><label for="remedy-${l.id}">Remedy</label><select id="remedy-${l.id}" name="remedy">
<option value="credit">credit (the seller credits an amount back)</option><option value="invoice_adjustment">invoice_adjustment (the seller reissues the line at an amount)</option>
<option value="additional_delivery">additional_delivery (a make-good by a date)</option><option value="accepted">accepted (pay as invoiced)</option></select>
${f.input({ id: `amount-${l.id}`, name: 'amountMinor', label: 'Amount in pence (credit or reissued amount)' })}
${f.input({ id: `owed-${l.id}`, name: 'owedImpressions', label: 'Impressions owed (make-good)' })}
${f.input({ id: `due-${l.id}`, name: 'dueBy', label: 'Due by (make-good)', type: 'date' })}
${f.textarea({ id: `reason-${l.id}`, name: 'reason', label: 'Why', required: true })}<button type="submit">Resolve</button></fieldset>`,
      );
    };
    const rows = lines
      .map(
        (l) =>
          `<tr${l.status === 'disputed' ? ' class="attention"' : ''}><td>${l.row}</td><td><code>${esc(l.lineId.slice(0, 8))}</code></td><td>${money(l.amountMinor)}</td><td>${money(l.finalMinor)}</td><td>${money(l.varianceMinor)} (${pct(l.variancePercent)})</td><td>${esc(l.impressions)} / ${esc(l.finalImpressions)}</td><td>${badge(l.status)}${l.remedy ? ` ${esc(l.remedy)} by ${esc(l.resolvedBy)}: ${esc(l.reason)}` : ''}</td></tr>${
            l.status === 'disputed' ? `<tr><td colspan="7">${form(l)}</td></tr>` : ''
          }`,
      )
      .join('');
    const body = `<p>${esc(invoice.seller)}, ${esc(invoice.period)}: ${badge(invoice.status)} invoiced ${money(invoice.invoicedMinor)} against final ${money(invoice.finalMinor)}, variance ${money(invoice.varianceMinor)} (${pct(invoice.variancePercent)}; the seller's tolerance ${esc(invoice.maxVariancePercent)}%).</p>
<table><caption>Lines</caption><thead><tr><th scope="col">Row</th><th scope="col">Line</th><th scope="col">Invoiced</th><th scope="col">Final</th><th scope="col">Variance</th><th scope="col">Impressions invoiced / final</th><th scope="col">State</th></tr></thead><tbody>${rows}</tbody></table>`;
    res.type('html').send(layout(`Invoice ${invoice.invoiceNumber}`, body, r.viewer, r.flash));
  });

  post('/console/billing/invoices/:id/lines/:lineId/resolve', async (r, req, about) => {
    const form = req.body as Record<string, string>;
    about.subject = 'The dispute';
    about.back = `/console/billing/invoices/${String(req.params.id)}`;
    const opt = (k: string) => (form[k] === undefined || form[k] === '' ? {} : { [k]: k === 'dueBy' ? form[k] : formInt(form[k]) });
    await r.call('resolveInvoiceDispute', {
      id: req.params.id,
      lineId: req.params.lineId,
      expectedVersion: formInt(form.expectedVersion),
      remedy: form.remedy,
      reason: form.reason,
      ...opt('amountMinor'),
      ...opt('owedImpressions'),
      ...opt('dueBy'),
    });
    return { text: `Resolved: ${String(form.remedy)}.`, back: about.back };
  });

  post('/console/billing/discrepancies/:id/acknowledge', async (r, req, about) => {
    about.subject = 'The discrepancy';
    await r.call('acknowledgeDeliveryDiscrepancy', { id: req.params.id, note: (req.body as Record<string, string>).note });
    return { text: 'Acknowledged: the final figure stands.', back: '/console/billing' };
  });
};
