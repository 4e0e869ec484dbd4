import { createTestEnv, type TestEnv } from '../support/api';
import { post, readBooking } from '../support/bookings';
import { until } from '../support/wait';
import { walletAndLedger } from '../support/wallet';
import { startConsoleService, type ConsoleService } from '../console/support';
import { assignClient, grantStaff } from '../../shared/staff/staff-store';
import type { BookingLine } from '../../shared/bookings/booking-schemas';

/**
 * Verified control on the sandbox's own suppliers, through the polls a clock advance queues: a
 * sandbox that honours every change proves it, and the documented trigger that ignores a pause
 * and stop (budget ending …78, docs/delivery.md) is caught and shown at the console.
 */
let env: TestEnv;
let service: ConsoleService;

beforeAll(async () => {
  env = await createTestEnv();
  service = await startConsoleService(env);
  // Two sets of workers on the same queues: clock polls may run at once, and decide each change once.
  await env.workers({ WORKER_QUEUES: 'suppliers,housekeeping' });
  await env.workers({ WORKER_QUEUES: 'suppliers' });
}, 60_000);
afterAll(() => env.close());

const lines = async (token: string, bookingId: string) =>
  (await readBooking(service.api, token, bookingId)).lines as unknown as BookingLine[];
const advance = async (token: string, days: number) =>
  expect((await post(service.api, token, '/api/v1/sandbox/clock/advance', { days })).status).toBe(200);

test('20 lines stopped at once are each verified exactly once after a full day shows them silent', async () => {
  const budgets = Array.from({ length: 20 }, (_, i) => 10_000 + i * 100);
  const booking = await service.launch(
    'org-vcs',
    budgets.map((budgetMinor) => ({ channel: 'ctv', adapterKey: 'sandbox-ctv', budgetMinor })),
    (b) => b.lines.every((l) => l.status === 'confirmed'),
    { startDate: today(), endDate: inDays(29), executionMode: 'sandbox', maximumCommitmentMinor: 300_000 },
  );
  const token = await service.token({ org: 'org-vcs', user: 'org-vcs-buyer' });
  const launched = { campaignId: booking.campaignId };
  await advance(token, 1);
  expect((await post(service.api, token, `/api/v1/campaigns/${launched.campaignId}/stop`, { note: 'Brand safety.' })).status).toBe(202);
  await until('every line to stop', async () => (await lines(token, booking.id)).every((l) => l.status === 'stopped'));
  expect((await lines(token, booking.id)).map((l) => l.verification?.state)).toEqual(budgets.map(() => 'pending'));
  // Two advances in a row: two rounds of polls, on two sets of workers.
  await advance(token, 2);
  await advance(token, 1);
  await until(
    'every stop to be verified',
    async () => (await lines(token, booking.id)).every((l) => l.verification?.state === 'verified'),
    40_000,
  );
  const ops = await env.db('line_operations').where({ booking_id: booking.id, kind: 'stop' });
  // Pending (1), then verified (2): decided once each, however many polls saw it.
  expect(ops.map((o) => o.verification_version)).toEqual(budgets.map(() => 2));
  expect((await lines(token, booking.id)).every((l) => l.status === 'stopped')).toBe(true);
}, 120_000);

test('a sandbox supplier that ignores a pause (…78) keeps delivering: the pause fails, the line goes to a person, the console says so', async () => {
  const booking = await service.launch(
    'org-vcs78',
    [{ channel: 'ctv', adapterKey: 'sandbox-ctv', budgetMinor: 30_078 }],
    (b) => b.lines[0]!.status === 'confirmed',
    { startDate: today(), endDate: inDays(29), executionMode: 'sandbox', maximumCommitmentMinor: 30_078 },
  );
  const token = await service.token({ org: 'org-vcs78', user: 'org-vcs78-buyer' });
  const line = (await lines(token, booking.id))[0]!;
  expect(
    (await post(service.api, token, `/api/v1/bookings/${booking.id}/lines/${line.id}/pause`, { expectedVersion: line.version })).status,
  ).toBe(202);
  await until('the pause to settle', async () => (await lines(token, booking.id))[0]!.status === 'stopped');
  await advance(token, 3);
  await until('the pause to fail', async () => (await lines(token, booking.id))[0]!.verification?.state === 'failed');
  const failed = (await lines(token, booking.id))[0]!;
  expect(failed.status).toBe('reconciliation-required');
  expect(failed.verification!.evidence).toMatchObject({ reason: 'delivered after the pause' });
  expect((failed.verification!.evidence as { spentMinor: number }).spentMinor).toBeGreaterThan(0);
  const buyer = await service.signIn({ user: 'org-vcs78-buyer', workspace: 'org-vcs78' });
  const html = (await buyer.page(`/console/bookings/${booking.id}`)).html;
  expect(html).toContain('data-verification="failed"');
  expect(html).toMatch(/The pause: contradicted by what the supplier said since: delivered after the pause, \d+\.\d\d GBP spent/);
  // Staff resolve it from the console: the form names the pause, and not applied means running again.
  await grantStaff(env.staff, 'staff-vcs78');
  await assignClient(env.staff, 'staff-vcs78', 'org-vcs78');
  const staff = await service.signIn({ user: 'staff-vcs78', workspace: 'staff-org' });
  const staffPage = (await staff.page(`/console/fulfilment/bookings/${booking.id}`)).html;
  expect(staffPage).toContain('not applied: the line is back as it was before the pause');
  const sent = await staff.form(`/console/fulfilment/bookings/${booking.id}/lines/${line.id}/resolve`, {
    expectedVersion: String(failed.version),
    outcome: 'not-applied',
    evidence: 'The supplier shows the campaign live: it never paused.',
  });
  expect(sent.status).toBe(303);
  expect((await staff.page(`/console/fulfilment/bookings/${booking.id}`)).html).toContain(
    'resolved as not applied: the pause did not happen',
  );
  expect((await lines(token, booking.id))[0]).toMatchObject({ status: 'confirmed', verification: { state: 'failed' } });
  expect((await walletAndLedger(env, 'org-vcs78')).consistent).toBe(true);
}, 90_000);

function today(): string {
  return new Date().toISOString().slice(0, 10);
}
function inDays(n: number): string {
  return new Date(Date.now() + n * 86_400_000).toISOString().slice(0, 10);
}
