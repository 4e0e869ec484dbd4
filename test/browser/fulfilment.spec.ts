import { expect, test } from '@playwright/test';
import { assignClient, grantStaff } from '../../shared/staff/staff-store';
import { post } from '../support/bookings';
import { html, startSupplierSite, type SupplierSite } from '../support/supplier-site';
import { accessible, signIn, startConsoleWorld, type ConsoleWorld } from './support/world';

const EVIDENCE = 'Supplier desk confirmed the order by phone, reference read back.';
let world: ConsoleWorld;
let site: SupplierSite;

test.beforeAll(async () => {
  // A slow sandbox supplier (budget …93) answers after 20 s, within the supplier timeout of 30 s:
  // late, once staff have marked the line uncertain, even where signing in takes many seconds.
  // Browser jobs may open the supplier site this file serves on loopback (a test-only allowance).
  world = await startConsoleWorld({ SANDBOX_SLOW_MS: '20000', BROWSER_ALLOW_LOOPBACK: 'true' }, { BROWSER_ALLOW_LOOPBACK: 'true' });
  site = await startSupplierSite({
    '/rate-card': html(
      '<!doctype html><html lang="en"><title>Rate card</title><h1>Rate card</h1><p>CPM 9.75 GBP on 12 screens.</p></html>',
    ),
  });
  for (const user of ['staff-1', 'staff-2']) {
    await grantStaff(world.env.staff, user);
    await assignClient(world.env.staff, user, 'org-a');
  }
});
test.afterAll(async () => {
  await world?.close();
  await site?.close();
});

const lineRow = (id: string) => world.env.db('booking_lines').where({ id }).first();

test('staff sign in, see what needs attention first, and resolve a reconciliation-required line', async ({ page }) => {
  // A sandbox line whose supplier answer is unknown (budget …92) lands in reconciliation-required.
  const doubtful = await world.launch('org-a', [{ channel: 'ctv', adapterKey: 'sandbox-ctv', budgetMinor: 10_092 }], (b) =>
    b.lines.every((l) => l.status === 'reconciliation-required'),
  );
  await world.launch('org-a', [{ channel: 'ctv', adapterKey: 'manual', budgetMinor: 10_000 }]);

  await signIn(page, world, { user: 'staff-1', workspace: 'staff-org' }, '/console/fulfilment');
  await expect(page.getByRole('heading', { name: 'Fulfilment queue' })).toBeVisible();
  // The session is a random id in an HttpOnly, SameSite=Lax cookie, Secure outside development.
  const cookies = await page.context().cookies();
  const session = cookies.find((c) => c.name === 'fd_console');
  expect(session).toMatchObject({ httpOnly: true, sameSite: 'Lax', secure: true, path: '/console' });
  expect(session!.value).not.toContain('.');
  await accessible(page);
  const rows = page.locator('tbody tr');
  await expect(rows).toHaveCount(2);
  await expect(rows.first()).toContainText('needs attention');
  await expect(rows.first()).toContainText('reconciliation-required');
  // Above the paged queue, whatever page it sits on: the booking with a line to reconcile.
  const urgent = page.getByRole('region', { name: 'Needs attention now' });
  await expect(urgent.getByRole('listitem')).toHaveCount(1);
  await expect(urgent.getByRole('link', { name: doubtful.id.slice(0, 8) })).toBeVisible();

  await rows.first().getByRole('link').click();
  await expect(page.getByRole('heading', { name: new RegExp(`Booking ${doubtful.id.slice(0, 8)}`) })).toBeVisible();
  await accessible(page);
  await page.getByLabel('Outcome').selectOption('applied');
  await page.getByLabel('Provider reference').fill('IO-4471');
  await page.getByLabel('Evidence').last().fill(EVIDENCE);
  await page.getByRole('button', { name: 'Resolve' }).click();
  // The message names the line as its section is headed, and the page opens at that line.
  await expect(page.getByRole('status')).toHaveText('Line 1 · ctv · sandbox-ctv resolved as applied: confirmed.');
  await expect(page).toHaveURL(new RegExp(`#line-${doubtful.lines[0]!.id}$`));
  await expect(page.locator('[data-line-status]')).toHaveText('confirmed');
  await accessible(page);
  const line = await lineRow(doubtful.lines[0]!.id);
  expect(line).toMatchObject({ status: 'confirmed', provider_reference: 'IO-4471' });
});

test('a stale page is told the line changed since it was loaded, and nothing changes', async ({ page }) => {
  const booking = await world.launch('org-a', [{ channel: 'ctv', adapterKey: 'manual', budgetMinor: 11_000 }]);
  const lineId = booking.lines[0]!.id;
  await signIn(page, world, { user: 'staff-1', workspace: 'staff-org' }, `/console/fulfilment/bookings/${booking.id}`);
  await expect(page.getByRole('button', { name: 'Claim' })).toBeVisible();

  // Meanwhile another member claims it over the API.
  const other = await world.token({ org: 'staff-org', user: 'staff-2' });
  const claimed = await post(world.api, other, `/api/v1/internal/fulfilment/bookings/${booking.id}/lines/${lineId}/claim`, {
    expectedVersion: booking.lines[0]!.version,
  });
  expect(claimed.status).toBe(200);
  const before = await lineRow(lineId);
  const events = await world.env.db('booking_events').where({ booking_id: booking.id }).count<{ count: string }[]>();

  await page.getByRole('button', { name: 'Claim' }).click();
  await expect(page.getByRole('alert')).toContainText('changed since you loaded it');
  await accessible(page);
  expect(await lineRow(lineId)).toEqual(before);
  expect(await world.env.db('booking_events').where({ booking_id: booking.id }).count()).toEqual(events);
  await expect(page.locator('[data-line-version]')).toHaveText(String(before.version));
  await expect(page.getByRole('button', { name: 'Claim' })).toHaveCount(0);
});

test('refusals: a non-staff person sees no queue; an unassigned client’s booking is not found; a forged form is refused', async ({
  page,
  browser,
}) => {
  const foreign = await world.launch('org-b', [{ channel: 'ctv', adapterKey: 'manual', budgetMinor: 12_000 }]);
  await signIn(page, world, { user: 'staff-1', workspace: 'staff-org' }, `/console/fulfilment/bookings/${foreign.id}`);
  await expect(page.getByRole('heading', { name: 'Not found' })).toBeVisible();
  await accessible(page);

  // A form without the session's CSRF token changes nothing.
  const lineId = foreign.lines[0]!.id;
  const forged = await page.request.post(`${world.base}/console/fulfilment/bookings/${foreign.id}/lines/${lineId}/claim`, {
    form: { expectedVersion: '0', _csrf: 'not-the-token' },
    maxRedirects: 0,
  });
  expect(forged.status()).toBe(403);

  const context = await browser.newContext();
  const stranger = await context.newPage();
  await signIn(stranger, world, { user: 'org-a-buyer', workspace: 'org-a' });
  // A buyer's console is their campaigns: nothing of the staff queue.
  await expect(stranger.getByRole('main').getByRole('link', { name: 'Campaigns' })).toBeVisible();
  await expect(stranger.getByRole('link', { name: 'Fulfilment queue' })).toHaveCount(0);
  await accessible(stranger);
  await stranger.goto(`${world.base}/console/fulfilment`);
  await expect(stranger.getByRole('heading', { name: 'Not found' })).toBeVisible();
  expect(await stranger.locator('tbody tr').count()).toBe(0);

  // Signing out ends the session: the queue asks for a sign-in again.
  await page.getByRole('button', { name: 'Sign out' }).click();
  await page.goto(`${world.base}/console/fulfilment`);
  await expect(page).toHaveURL(/\/console\/login/);
  const missing = await page.goto(`${world.base}/console/no-such-page`);
  expect(missing!.status()).toBe(404);
  await expect(page.getByRole('heading', { name: 'Not found' })).toBeVisible();
  await context.close();
});

test('a supplier answer that arrives after staff marked the line uncertain is shown as late evidence; a browser job carries the snapshot digest, and one that failed says why', async ({
  page,
}) => {
  // The supplier's late answer comes 20 s after the launch.
  test.setTimeout(120_000);
  const booking = await world.launch('org-a', [{ channel: 'ctv', adapterKey: 'sandbox-ctv', budgetMinor: 10_093 }], (b) =>
    b.lines.every((l) => l.status === 'in-progress'),
  );
  const lineId = booking.lines[0]!.id;
  await signIn(page, world, { user: 'staff-1', workspace: 'staff-org' }, `/console/fulfilment/bookings/${booking.id}`);
  await page.getByLabel('Evidence').first().fill('The supplier has not answered within its usual time.');
  await page.getByRole('button', { name: 'Mark uncertain' }).click();
  await expect(page.getByRole('status')).toContainText('Line 1 · ctv · sandbox-ctv marked uncertain');
  await expect(page.locator('[data-line-status]')).toHaveText('reconciliation-required');

  await expect
    .poll(async () => (await world.env.db('booking_events').where({ line_id: lineId, action: 'line.late-supplier-answer' })).length, {
      timeout: 60_000,
    })
    .toBe(1);
  await page.reload();
  await expect(page.locator('ol.timeline li', { hasText: 'line.late-supplier-answer' })).toContainText('late supplier answer');
  await expect(page.locator('[data-line-status]')).toHaveText('reconciliation-required');
  await accessible(page);

  // A browser job on the supplier's official source, bound to the snapshot the page showed. The
  // sandbox's official host does not resolve here: the job ends failed, and the page says why.
  await expect(page.locator('[data-snapshot-digest]')).toHaveText(booking.snapshotDigest);
  await page.getByLabel('Supplier URL').fill('https://sandbox-suppliers.flightdeck.dev/ctv/rate-card');
  await page.getByLabel('I confirm this is read-only').check();
  await page.getByRole('button', { name: 'Queue browser job' }).click();
  await expect(page.getByRole('status')).toContainText('Queued browser job');
  const jobs = await world.env.db('browser_jobs').where({ booking_id: booking.id });
  expect(jobs).toHaveLength(1);
  expect(jobs[0]).toMatchObject({
    purpose: 'observe',
    requested_by: 'staff-1',
    supplier_url: 'https://sandbox-suppliers.flightdeck.dev/ctv/rate-card',
  });
  await expect
    .poll(async () => (await world.env.db('browser_jobs').where({ id: jobs[0].id }).first()).status, { timeout: 60_000 })
    .toBe('failed');
  await page.reload();
  const item = page.locator(`[data-browser-job="${jobs[0].id}"]`);
  await expect(item.locator('[data-browser-job-status]')).toHaveText('failed');
  await expect(item).toContainText('Failed:');
  await accessible(page);
});

test("a browser job's evidence is shown on the booking page: the screenshot as a picture, beside what the page said", async ({ page }) => {
  test.setTimeout(120_000);
  const booking = await world.launch('org-a', [{ channel: 'dooh', adapterKey: 'computer-use', budgetMinor: 10_000 }]);
  await signIn(page, world, { user: 'staff-2', workspace: 'staff-org' }, `/console/fulfilment/bookings/${booking.id}`);
  await page.getByLabel('Supplier URL').fill(`${site.origin}/rate-card`);
  await page.getByLabel('I confirm this is read-only').check();
  await page.getByRole('button', { name: 'Queue browser job' }).click();
  await expect(page.getByRole('status')).toContainText('Queued browser job');
  const [job] = await world.env.db('browser_jobs').where({ booking_id: booking.id });
  await expect
    .poll(async () => (await world.env.db('browser_jobs').where({ id: job.id }).first()).status, { timeout: 90_000 })
    .toBe('completed');
  await page.reload();
  const item = page.locator(`[data-browser-job="${job.id}"]`);
  await expect(item.locator('[data-browser-job-status]')).toHaveText('completed');
  const picture = item.getByRole('img', { name: new RegExp(`^Screenshot of ${site.origin.replace(/\./g, '\\.')}/rate-card`) });
  await expect(picture).toBeVisible();
  // Loaded, not merely placed: the console's policy lets it show pictures from its own origin.
  // (Visible comes before decoded: wait for the picture to finish loading, which it never would if refused.)
  await expect
    .poll(() =>
      picture.evaluate((img) =>
        (img as unknown as { complete: boolean }).complete ? (img as unknown as { naturalWidth: number }).naturalWidth : 0,
      ),
    )
    .toBeGreaterThan(0);
  await expect(item.locator('[data-final-url]')).toHaveText(`${site.origin}/rate-card`);
  await expect(item.locator('[data-http-status]')).toHaveText('200');
  await accessible(page);
  expect(site.received.map((r) => r.method)).toEqual(['GET']);
});
