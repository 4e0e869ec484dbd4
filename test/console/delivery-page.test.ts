import { createTestEnv, type TestEnv } from '../support/api';
import { startConsoleService, type ConsoleService } from './support';
import { assignClient, grantStaff } from '../../shared/staff/staff-store';
import { addDays } from '../../shared/dates';
import type { CampaignDelivery } from '../../shared/delivery/campaign-delivery';
import { post } from '../support/bookings';
import { money } from '../../api/console/html';

let env: TestEnv;
let service: ConsoleService;
beforeAll(async () => {
  env = await createTestEnv();
  service = await startConsoleService(env);
  await grantStaff(env.staff, 'stan');
  await assignClient(env.staff, 'stan', 'org-cd');
});
afterAll(() => env.close());

test('staff enter a workflow line’s delivery at the console; the buyer sees it charted against the pace, without script, and exports it as CSV', async () => {
  const booking = await service.launch('org-cd', [{ channel: 'ctv', adapterKey: 'manual', budgetMinor: 31_000 }], undefined, {
    name: 'Spring delivery',
  });
  const line = booking.lines[0]!;
  // Staff booked it with the supplier by hand (the fulfilment flow is tested elsewhere).
  await env
    .db('booking_lines')
    .where({ id: line.id })
    .update({ status: 'confirmed', confirmed_at: new Date(), execution_method: 'manual' });

  const staff = await service.signIn({ user: 'stan', workspace: 'staff' });
  const bookingPage = await staff.page(`/console/fulfilment/bookings/${booking.id}`);
  expect(bookingPage.html).toContain(`action="/console/fulfilment/bookings/${booking.id}/lines/${line.id}/delivery"`);
  const sent = await staff.form(`/console/fulfilment/bookings/${booking.id}/lines/${line.id}/delivery`, {
    csv: 'date,impressions,clicks,completions,spend_minor\n2099-03-01,1000,10,900,1000\n2099-03-02,1500,12,1300,1200',
  });
  expect(sent.status).toBe(303);
  const stored = await env.db('delivery_days').where({ line_id: line.id }).orderBy('day').select('spend_minor', 'source', 'entered_by');
  expect(stored.map((r) => [Number(r.spend_minor), r.source, r.entered_by])).toEqual([
    [1000, 'staff', 'stan'],
    [1200, 'staff', 'stan'],
  ]);

  const buyer = await service.signIn({ user: 'org-cd-buyer', workspace: 'org-cd' });
  const page = await buyer.page(`/console/campaigns/${booking.campaignId}/delivery?from=2099-03-01&to=2099-03-05`);
  expect(page.status).toBe(200);
  expect(page.html).toContain('<svg');
  expect(page.html).toMatch(/<polyline points="[^"]+" [^>]*data-series="spend"/);
  expect(page.html).toMatch(/data-series="expected"/);
  expect(page.html).not.toMatch(/<script/i);
  expect(page.html).toContain('GBP 22.00 of GBP 310.00');

  const csv = await buyer.go(`${service.base}/console/campaigns/${booking.campaignId}/delivery.csv?from=2099-03-01&to=2099-03-05`);
  expect(csv.headers.get('content-type')).toMatch(/^text\/csv/);
  expect((await csv.text()).trim().split('\r\n')).toHaveLength(3);

  // Another workspace's campaign is not found.
  const other = await service.signIn({ user: 'eve', workspace: 'org-other' });
  expect((await other.page(`/console/campaigns/${booking.campaignId}/delivery`)).status).toBe(404);
});

test('the delivery page charts each line’s outlook: actual, projected to the flight’s end with its interval shaded, and the budget', async () => {
  const today = new Date().toISOString().slice(0, 10);
  const booking = await service.launch('org-cd', [{ channel: 'ctv', adapterKey: 'manual', budgetMinor: 14_000 }], undefined, {
    name: 'Outlook',
    startDate: today,
    endDate: addDays(today, 13),
  });
  const line = booking.lines[0]!;
  await env
    .db('booking_lines')
    .where({ id: line.id })
    .update({ status: 'confirmed', confirmed_at: new Date(), execution_method: 'manual' });
  // Six days pass on the workspace's sandbox clock; staff enter them, slower than the budget's pace.
  const buyerToken = await service.token({ org: 'org-cd', user: 'org-cd-buyer' });
  expect((await post(service.api, buyerToken, '/api/v1/sandbox/clock/advance', { days: 6 })).status).toBe(200);
  const staff = await service.signIn({ user: 'stan', workspace: 'staff' });
  const csv = ['date,impressions,clicks,completions,spend_minor']
    .concat(Array.from({ length: 6 }, (_, k) => `${addDays(today, k)},${1000 + k * 10},10,900,${600 + (k % 2) * 40}`))
    .join('\n');
  expect((await staff.form(`/console/fulfilment/bookings/${booking.id}/lines/${line.id}/delivery`, { csv })).status).toBe(303);

  const buyer = await service.signIn({ user: 'org-cd-buyer', workspace: 'org-cd' });
  const page = await buyer.page(`/console/campaigns/${booking.campaignId}/delivery`);
  expect(page.status).toBe(200);
  expect(page.html).toMatch(/<polygon points="[^"]+" [^>]*data-series="interval"/);
  expect(page.html).toMatch(/<polyline points="[^"]+" [^>]*data-series="projected"/);
  expect(page.html).toMatch(/data-series="budget"/);
  expect(page.html).toContain('under-delivery');
  expect(page.html).not.toMatch(/<script/i);
  // The projection and its interval are the ones the API answers.
  const res = await service.api.fetch(`/api/v1/campaigns/${booking.campaignId}/delivery`, { token: buyerToken });
  const { delivery } = (await res.json()) as { delivery: CampaignDelivery };
  const o = delivery.lines[0]!.outlook;
  expect(o).toMatchObject({ basis: 'recent-rate', daysObserved: 6, classification: 'under-delivery' });
  expect(page.html).toContain(`${money(o.spend.projectedMinor)} (${money(o.spend.lowMinor!)} to ${money(o.spend.highMinor!)})`);
});
