import { createTestEnv, type TestEnv } from '../support/api';
import { startConsoleService, type ConsoleService } from './support';
import { assignClient, grantStaff } from '../../shared/staff/staff-store';

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
