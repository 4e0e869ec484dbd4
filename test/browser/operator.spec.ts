import { randomUUID } from 'node:crypto';
import { expect, test } from '@playwright/test';
import type { CheckoutSession } from '../../shared/billing/provider';
import { readWallet } from '../../shared/wallet/ledger';
import { assignClient, grantStaff } from '../../shared/staff/staff-store';
import { grantOps } from '../../shared/staff/ops-store';
import { fundWallet } from '../support/wallet';
import { syncAudience, syncBody, waitForCohort } from '../audiences/support';
import { accessible, requiredMarked, signIn, startConsoleWorld, type ConsoleWorld } from './support/world';

const ORG = 'org-d';
const OPERATOR = { user: 'op-d', workspace: ORG, permissions: ['operator:reconcile'] };
let world: ConsoleWorld;

test.beforeAll(async () => {
  world = await startConsoleWorld();
  await fundWallet(world.env, ORG, 50_000);
});
test.afterAll(() => world?.close());

/** A person asks to fund the wallet; the provider takes the money, but its signed event never arrives. */
async function paidButNeverSettled() {
  const buyer = await world.token({ org: ORG, user: `${ORG}-buyer` });
  const res = await world.api.fetch('/api/v1/billing/topup/requests', {
    method: 'POST',
    token: buyer,
    headers: { 'content-type': 'application/json', 'idempotency-key': randomUUID() },
    body: JSON.stringify({ amountMinor: 15_000, currency: 'GBP' }),
  });
  expect(res.status).toBe(201);
  const { request } = (await res.json()) as { request: { id: string; sessionId: string } };
  const row = await world.env.db('sandbox_checkout_sessions').where({ id: request.sessionId }).first();
  const session = { ...(row.session as CheckoutSession), status: 'complete', payment_status: 'paid' };
  await world.env
    .db('sandbox_checkout_sessions')
    .where({ id: request.sessionId })
    .update({ session: JSON.stringify(session) });
  return request;
}

test('an operator reconciles a funding request and sees that the balance did not move', async ({ page }) => {
  const request = await paidButNeverSettled();
  const before = await readWallet(world.env.db, ORG);
  await signIn(page, world, OPERATOR, '/console/operator');
  await accessible(page);
  await page.getByRole('link', { name: request.id }).click();
  await expect(page.getByText('Reconciling never credits the wallet.')).toBeVisible();
  await expect(page.locator('[data-wallet-balance]')).toHaveText('GBP 500.00');
  await accessible(page);
  expect(await requiredMarked(page)).toBe(1);

  await page.getByLabel('Checkout session id').fill(request.sessionId);
  await page.getByRole('button', { name: /^Reconcile/ }).click();
  await expect(page.getByRole('status')).toContainText('Reconciled: matched');
  await expect(page.getByRole('status')).toContainText('before GBP 500.00, after GBP 500.00');
  await expect(page.locator('[data-wallet-balance]')).toHaveText('GBP 500.00');
  await expect(page.getByRole('listitem').filter({ hasText: request.sessionId })).toContainText('matched');
  await accessible(page);
  expect(await readWallet(world.env.db, ORG)).toEqual(before);
  expect(await world.env.db('wallet_entries').where({ subject_id: request.id })).toHaveLength(0);
});

test('an operator marks an in-progress line uncertain from its booking', async ({ page }) => {
  // A slow sandbox supplier (budget …93) keeps the line in progress.
  const booking = await world.launch(ORG, [{ channel: 'ctv', adapterKey: 'sandbox-ctv', budgetMinor: 10_093 }], (b) =>
    b.lines.every((l) => l.status === 'in-progress'),
  );
  await signIn(page, world, OPERATOR, '/console/operator');
  // The workspace's bookings are listed by campaign and client: no booking id to paste.
  const row = page.getByRole('row').filter({ hasText: booking.id.slice(0, 8) });
  await expect(row).toContainText(String(booking.campaignName));
  await expect(row).toContainText((booking.client as { name: string }).name);
  await accessible(page);
  await row.getByRole('link').click();
  await accessible(page);
  expect(await requiredMarked(page)).toBe(1);
  await page.getByLabel('Evidence that the outcome is uncertain').fill('The supplier timed out and its answer never came.');
  await page.getByRole('button', { name: 'Mark uncertain' }).click();
  await expect(page.getByRole('status')).toHaveText('Line 1 · ctv · sandbox-ctv now needs reconciliation.');
  const line = await world.env.db('booking_lines').where({ id: booking.lines[0]!.id }).first();
  expect(line.status).toBe('reconciliation-required');
  // The operator page shows the evidence too, with who and when.
  const entry = page.getByRole('list', { name: 'Evidence and reasons' }).getByRole('listitem').first();
  await expect(entry).toContainText('The supplier timed out and its answer never came.');
  await expect(entry).toContainText('op-d (human, web)');
  await expect(page.locator('ol.timeline > li').first()).toContainText('line.marked-uncertain');
  await accessible(page);
});

test('a person without operator:reconcile gets no operator pages, even with a request id', async ({ page }) => {
  const request = await paidButNeverSettled();
  await signIn(page, world, { user: 'viewer-d', workspace: ORG });
  await expect(page.getByRole('link', { name: 'Operator' })).toHaveCount(0);
  for (const path of ['/console/operator', `/console/operator/funding/${request.id}`]) {
    await page.goto(`${world.base}${path}`);
    await expect(page.getByRole('heading', { name: 'Not allowed' })).toBeVisible();
    await expect(page.getByText(request.sessionId)).toHaveCount(0);
  }
  await accessible(page);
  expect(await world.env.db('funding_reconciliations').where({ request_id: request.id })).toHaveLength(0);
});

test('staff see supplier queue counts; only the ops role gets the queue dashboard', async ({ page, browser }) => {
  await grantStaff(world.env.staff, 'staff-d');
  await assignClient(world.env.staff, 'staff-d', ORG);
  await signIn(page, world, { user: 'staff-d', workspace: 'staff-org' }, '/console/queues');
  await expect(page.getByRole('table')).toContainText('supplier.sandbox-ctv');
  await expect(page.getByRole('button', { name: /queue dashboard/ })).toHaveCount(0);
  await accessible(page);

  await grantOps(world.env.db, 'ops-d');
  await grantStaff(world.env.staff, 'ops-d');
  const context = await browser.newContext();
  const ops = await context.newPage();
  await signIn(ops, world, { user: 'ops-d', workspace: 'staff-org' }, '/console/queues');
  await ops.getByRole('button', { name: /queue dashboard/ }).click();
  await expect(ops).toHaveURL(/\/admin\/queues/);
  await expect(ops).toHaveTitle(/Flightdeck queues/);
  // The dashboard's cookie holds a session id, not the token; signing out of the console ends it.
  const dashboard = (await context.cookies()).find((c) => c.name === 'fd_dashboard')!;
  expect(dashboard).toMatchObject({ httpOnly: true, sameSite: 'Strict', path: '/admin/queues' });
  expect(dashboard.value).not.toContain('.');
  await ops.goto(`${world.base}/console/queues`);
  await ops.getByRole('button', { name: 'Sign out' }).click();
  expect((await ops.goto(`${world.base}/admin/queues`))!.status()).toBe(404);
  await context.close();
});

test('an operator discards an identity attempt whose result is unavailable', async ({ page }) => {
  // The campaign's name asks the sandbox audience supplier to lose its answer.
  const booking = await world.launch(
    ORG,
    [{ channel: 'ctv', adapterKey: 'sandbox-ctv', budgetMinor: 10_000 }],
    (b) => b.status === 'confirmed',
    {
      name: 'Lost answer [sync-unknown]',
    },
  );
  const buyer = await world.token({ org: ORG, user: `${ORG}-buyer` });
  const res = await syncAudience(world.api, buyer, booking.campaignId, syncBody());
  expect(res.status).toBe(202);
  const { cohort } = (await res.json()) as { cohort: { id: string } };
  const waiting = await waitForCohort(world.api, buyer, cohort.id, (c) => c.state === 'needs-resolution');

  await signIn(page, world, OPERATOR, '/console/operator');
  await page.getByLabel('Cohort id').fill(cohort.id);
  await page
    .locator('form', { has: page.getByLabel('Cohort id') })
    .getByRole('button', { name: 'Open' })
    .click();
  await expect(page.getByRole('heading', { name: new RegExp(waiting.attempts[0]!.id) })).toBeVisible();
  await accessible(page);
  await page.getByLabel('Evidence reference').fill('ticket:SUP-1182');
  await page.getByRole('button', { name: /^Discard/ }).click();
  await expect(page.getByRole('status')).toHaveText(`Attempt ${waiting.attempts[0]!.id} was resolved: its result is discarded.`);
  const after = await waitForCohort(world.api, buyer, cohort.id, () => true);
  expect(after).toMatchObject({ state: 'discarded', revision: 2 });
  expect(after.attempts[0]!.resolution).toMatchObject({
    outcome: 'discard-unavailable-result',
    evidenceReference: 'ticket:SUP-1182',
    by: 'op-d',
  });
});
