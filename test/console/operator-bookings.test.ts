import { createTestEnv, type TestEnv } from '../support/api';
import { startConsoleService, type ConsoleService } from './support';

/**
 * The operator page lists the workspace's bookings by campaign and client, so operators need no
 * booking id. It lists exactly what the API would show the operator: their own workspace's, and
 * only campaigns within their product.
 */
let env: TestEnv;
let service: ConsoleService;

beforeAll(async () => {
  env = await createTestEnv();
  service = await startConsoleService(env);
});
afterAll(() => env.close());

const rowsOf = (html: string) =>
  [...html.matchAll(/<tr[^>]*><td><a href="\/console\/operator\/bookings\/([0-9a-f-]{36})">([^<]*)<\/a>[\s\S]*?<\/tr>/g)].map((m) => ({
    id: m[1]!,
    campaign: m[2]!,
    row: m[0],
  }));

test('an operator sees their workspace’s bookings by campaign and client, newest first, and no one else’s', async () => {
  const ctv = await service.launch('org-op', [{ channel: 'ctv', adapterKey: 'manual', budgetMinor: 10_000 }], undefined, {
    name: 'Winter sale',
    clientName: 'Kettle & Co',
  });
  const dooh = await service.launch('org-op', [{ channel: 'dooh', adapterKey: 'manual', budgetMinor: 10_000 }], undefined, {
    name: 'Station posters',
    clientName: 'Kettle & Co',
  });
  const foreign = await service.launch('org-other', [{ channel: 'dooh', adapterKey: 'manual', budgetMinor: 10_000 }]);

  const operator = await service.signIn({ user: 'op-1', workspace: 'org-op', permissions: ['operator:reconcile'] });
  const page = await operator.page('/console/operator');
  expect(page.status).toBe(200);
  const rows = rowsOf(page.html);
  expect(rows.map((r) => [r.id, r.campaign])).toEqual([
    [dooh.id, 'Station posters'],
    [ctv.id, 'Winter sale'],
  ]);
  // The client is named, escaped as any value.
  for (const r of rows) expect(r.row).toContain('Kettle &amp; Co');
  expect(page.html).not.toContain(foreign.id);

  // A DOOH-only operator of the same workspace sees the DOOH booking only, as the API would show them.
  const narrow = await service.signIn({
    user: 'op-2',
    workspace: 'org-op',
    permissions: ['operator:reconcile'],
    product: 'flightdeck-dooh',
  });
  const narrowRows = rowsOf((await narrow.page('/console/operator')).html);
  expect(narrowRows.map((r) => r.id)).toEqual([dooh.id]);
  expect((await narrow.page(`/console/operator/bookings/${ctv.id}`)).status).toBe(404);
});

test('a person without operator:reconcile gets no list', async () => {
  await service.launch('org-op2', [{ channel: 'ctv', adapterKey: 'manual', budgetMinor: 10_000 }]);
  const viewer = await service.signIn({ user: 'viewer', workspace: 'org-op2' });
  const page = await viewer.page('/console/operator');
  expect(page.status).toBe(403);
  expect(page.html).not.toContain('/console/operator/bookings/');
});
