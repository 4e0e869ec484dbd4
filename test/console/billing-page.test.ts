import { randomUUID } from 'node:crypto';
import { createTestEnv, json, type TestEnv } from '../support/api';
import { post } from '../support/bookings';
import { startConsoleService, type ConsoleService } from './support';
import { assignClient, grantStaff } from '../../shared/staff/staff-store';
import { addDays } from '../../shared/dates';
import { postInvoice } from '../reconciliation/support';

let env: TestEnv;
let service: ConsoleService;
beforeAll(async () => {
  env = await createTestEnv();
  service = await startConsoleService(env);
  await grantStaff(env.staff, 'stan');
  await assignClient(env.staff, 'stan', 'org-cb');
});
afterAll(() => env.close());

// A flight that ran in the first days of last month: its days are over on any clock.
const now = new Date();
const lastMonth = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() - 1, 1)).toISOString().slice(0, 10);
const period = lastMonth.slice(0, 7);

test('staff finalize a workflow month; the buyer resolves the disputed invoice at the console and prints the seller’s statement, exported as formula-safe CSV', async () => {
  const booking = await service.launch('org-cb', [{ channel: 'ctv', adapterKey: 'manual', budgetMinor: 31_000 }], undefined, {
    name: '=HYPERLINK("http://x")',
  });
  const line = booking.lines[0]!;
  await env
    .db('booking_lines')
    .where({ id: line.id })
    .update({ status: 'confirmed', confirmed_at: new Date(), execution_method: 'manual' });
  await env
    .db('campaigns')
    .where({ id: booking.campaignId })
    .update({ start_date: lastMonth, end_date: addDays(lastMonth, 1) });

  const staffToken = await service.token({ org: 'staff', user: 'stan' });
  const base = `/api/v1/internal/fulfilment/bookings/${booking.id}/lines/${line.id}`;
  const csv = `date,impressions,clicks,completions,spend_minor\n${lastMonth},1000,10,900,1000\n${addDays(lastMonth, 1)},1500,12,1300,1200`;
  expect((await post(service.api, staffToken, `${base}/delivery`, { csv })).status).toBe(200);
  expect((await post(service.api, staffToken, `${base}/finalize`, { period })).status).toBe(200);
  expect((await post(service.api, staffToken, `${base}/finalize`, { period })).status).toBe(409);
  // A later entry for a final day is kept apart, not applied.
  const late = `date,impressions,clicks,completions,spend_minor\n${lastMonth},1000,10,900,1400`;
  expect((await post(service.api, staffToken, `${base}/delivery`, { csv: late })).status).toBe(200);
  expect(Number((await env.db('delivery_days').where({ line_id: line.id, day: lastMonth }).first())!.spend_minor)).toBe(1000);

  const buyerToken = await service.token({ org: 'org-cb', user: 'org-cb-buyer' });
  const invoiceNumber = `M-${randomUUID().slice(0, 6)}`;
  const imported = await postInvoice(service.api, buyerToken, {
    invoiceNumber,
    seller: 'manual',
    period,
    currency: 'GBP',
    lines: [{ lineId: line.id, impressions: 2500, amountMinor: 3000 }],
  });
  expect(imported.status).toBe(201);
  const { invoice, lines } = await json<{ invoice: { id: string }; lines: Array<{ id: string; status: string }> }>(imported);
  expect(lines[0]!.status).toBe('disputed');

  const buyer = await service.signIn({ user: 'org-cb-buyer', workspace: 'org-cb' });
  const home = await buyer.page('/console/billing');
  expect(home.html).toContain('1 disputed invoice line(s), GBP 8.00 at stake');
  expect(home.html).toContain('1 final day(s) restated by a seller');
  const page = await buyer.page(`/console/billing/invoices/${invoice.id}`);
  const action = `/console/billing/invoices/${invoice.id}/lines/${lines[0]!.id}/resolve`;
  expect(page.html).toContain(`action="${action}"`);
  // A refused form changes nothing and says why.
  const refused = await buyer.form(action, { expectedVersion: '1', remedy: 'credit', reason: 'No amount given' });
  expect(refused.status).toBe(303);
  expect((await env.db('invoice_lines').where({ id: lines[0]!.id }).first())!.status).toBe('disputed');
  const done = await buyer.form(action, {
    expectedVersion: '1',
    remedy: 'invoice_adjustment',
    amountMinor: '2200',
    reason: 'Reissued at our count',
  });
  expect(done.status).toBe(303);
  expect((await env.db('invoice_lines').where({ id: lines[0]!.id }).first())!).toMatchObject({
    status: 'resolved',
    remedy: 'invoice_adjustment',
    resolved_by: 'org-cb-buyer',
  });

  const statement = await buyer.page(`/console/billing/statements/manual/${period}`);
  expect(statement.status).toBe(200);
  expect(statement.html).toContain('@media print');
  expect(statement.html).toContain('GBP 22.00');
  const exported = await buyer.go(`${service.base}/console/billing/statements/manual/${period}.csv`);
  const text = await exported.text();
  expect(exported.headers.get('content-type')).toContain('text/csv');
  // The campaign's name would be a formula in a spreadsheet: it is text there.
  expect(text).toContain(`"'=HYPERLINK(""http://x"")"`);
  expect(text.split('\r\n')[0]).toBe(
    'seller,period,line_id,booking_id,campaign_id,campaign_name,channel,execution_mode,budget_minor,final_spend_minor,final_impressions,provisional_spend_minor,provisional_impressions,billable_minor,captured_minor,fees_minor,month_closed,invoice_number,invoiced_minor,invoice_status',
  );
});
