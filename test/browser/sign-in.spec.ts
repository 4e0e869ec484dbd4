import { expect, test } from '@playwright/test';
import { assignClient, grantStaff } from '../../shared/staff/staff-store';
import { accessible, signIn, startConsoleWorld, type ConsoleWorld } from './support/world';

let world: ConsoleWorld;
test.beforeAll(async () => {
  world = await startConsoleWorld();
  await grantStaff(world.env.staff, 'staff-s');
  await assignClient(world.env.staff, 'staff-s', 'org-s');
});
test.afterAll(() => world?.close());

test('a sign-in finishes only in the browser that started it, and only once', async ({ page, browser }) => {
  // Start a sign-in, and walk the provider's redirects by hand to stop where it sends the code back.
  await page.goto(`${world.base}/console/login?go=1`);
  const action = await page.locator('form').getAttribute('action');
  let res = await page.request.post(new URL(action!, world.base).href, {
    form: { user: 'staff-s', workspace: 'staff-org', product: 'flightdeck', channels: '', permissions: '' },
    maxRedirects: 0,
  });
  let location = res.headers().location ?? '';
  for (let hops = 0; location && !location.includes('/console/callback') && hops < 5; hops++) {
    res = await page.request.get(new URL(location, world.base).href, { maxRedirects: 0 });
    location = res.headers().location ?? '';
  }
  const callback = new URL(location, world.base).href;
  expect(callback).toContain('/console/callback?');
  expect(new URL(callback).searchParams.get('code')).toBeTruthy();

  // Another browser with the same callback URL gets no session.
  const other = await browser.newContext();
  const stranger = await other.newPage();
  const refused = await stranger.goto(callback);
  expect(refused!.status()).toBe(400);
  await expect(stranger.getByRole('heading', { name: 'Sign-in failed' })).toBeVisible();
  expect((await other.cookies()).find((c) => c.name === 'fd_console')).toBeUndefined();
  await stranger.goto(`${world.base}/console/fulfilment`);
  await expect(stranger).toHaveURL(/\/console\/login/);
  await other.close();

  // Its own browser finishes it, once; the same callback again is refused.
  await page.goto(callback);
  await expect(page.getByRole('button', { name: 'Sign out' })).toBeVisible();
  const again = await page.goto(callback);
  expect(again!.status()).toBe(400);
});

test('a form sent without a session changes nothing and asks for a sign-in', async ({ page, request }) => {
  const booking = await world.launch('org-s', [{ channel: 'ctv', adapterKey: 'manual', budgetMinor: 10_000 }]);
  const line = booking.lines[0]!;
  const res = await request.post(`${world.base}/console/fulfilment/bookings/${booking.id}/lines/${line.id}/claim`, {
    form: { expectedVersion: String(line.version) },
    maxRedirects: 0,
  });
  expect(res.status()).toBe(303);
  expect(res.headers().location).toMatch(/^\/console\/login/);
  expect(await world.env.db('booking_lines').where({ id: line.id }).first()).toMatchObject({ version: line.version, claimed_by: null });

  // Signed in, the same claim goes through.
  await signIn(page, world, { user: 'staff-s', workspace: 'staff-org' }, `/console/fulfilment/bookings/${booking.id}`);
  await page.getByRole('button', { name: 'Claim' }).click();
  await expect(page.getByRole('status')).toHaveText('Line 1 · ctv · manual claimed: it is yours to work.');
  expect(await world.env.db('booking_lines').where({ id: line.id }).first()).toMatchObject({
    version: line.version + 1,
    claimed_by: 'staff-s',
  });
});

test('console pages forbid framing and scripts; the rest of the service is untouched by them', async ({ request }) => {
  const page = await request.get(`${world.base}/console/login`);
  expect(page.headers()['content-security-policy']).toContain("default-src 'none'");
  expect(page.headers()['x-frame-options']).toBe('DENY');
  const api = await request.get(`${world.base}/api/v1/no-such-route`);
  expect(api.status()).toBe(404);
  expect(api.headers()['content-type']).toMatch(/^application\/problem\+json/);
  expect(api.headers()['content-security-policy']).toBeUndefined();
});

test('staff land on the queue with their urgent work counted', async ({ page }) => {
  await grantStaff(world.env.staff, 'staff-u');
  await assignClient(world.env.staff, 'staff-u', 'org-u');
  await world.launch('org-u', [{ channel: 'ctv', adapterKey: 'sandbox-ctv', budgetMinor: 10_092 }], (b) =>
    b.lines.every((l) => l.status === 'reconciliation-required'),
  );
  const late = await world.launch('org-u', [{ channel: 'ctv', adapterKey: 'manual', budgetMinor: 10_000 }]);
  await world.launch('org-u', [{ channel: 'ctv', adapterKey: 'manual', budgetMinor: 10_100 }]);
  const { db } = world.env;
  await db('bookings')
    .where({ id: late.id })
    .update({ confirmation_due_at: db.raw("now() - interval '2 hours'") });

  await signIn(page, world, { user: 'staff-u', workspace: 'staff-org' }, '/console');
  await expect(page).toHaveURL(`${world.base}/console/fulfilment`);
  await expect(page.getByRole('heading', { level: 1 })).toHaveText('Fulfilment queue (2 need attention)');
  await expect(page.locator('[data-urgent-count]')).toHaveText('2 bookings of your clients need a person now.');
  await expect(page.getByRole('region', { name: 'Needs attention now' }).getByRole('listitem')).toHaveCount(2);
});

test('a stale form is refused on a page that says so and links back to where it came from', async ({ page }) => {
  const booking = await world.launch('org-s', [{ channel: 'ctv', adapterKey: 'manual', budgetMinor: 10_200 }]);
  const line = booking.lines[0]!;
  await signIn(page, world, { user: 'staff-s', workspace: 'staff-org' }, `/console/fulfilment/bookings/${booking.id}`);
  // As a page left open across a sign-out and back in would send it: a token that is no longer the session's.
  await page
    .locator(`form[action$="/lines/${line.id}/claim"] input[name="_csrf"]`)
    .evaluate((el) => ((el as unknown as { value: string }).value = 'a-token-from-an-older-session'));
  await page.getByRole('button', { name: 'Claim' }).click();
  await expect(page.getByRole('heading', { name: 'Not allowed' })).toBeVisible();
  await expect(page.getByText('The form was stale or not ours, so nothing was changed.')).toBeVisible();
  await expect(page.getByRole('button', { name: 'Sign out' })).toBeVisible();
  await accessible(page);
  expect(await world.env.db('booking_lines').where({ id: line.id }).first()).toMatchObject({ version: line.version, claimed_by: null });
  await page.getByRole('link', { name: 'Back to the page you were on' }).click();
  await expect(page).toHaveURL(`${world.base}/console/fulfilment/bookings/${booking.id}`);
  await page.getByRole('button', { name: 'Claim' }).click();
  await expect(page.getByRole('status')).toHaveText('Line 1 · ctv · manual claimed: it is yours to work.');
});

test('the development sign-in page has its content in a main landmark', async ({ page }) => {
  await page.goto(`${world.base}/console/login?go=1`);
  await expect(page.getByRole('main')).toHaveCount(1);
  await expect(page.getByRole('main').getByLabel('User id')).toBeVisible();
  await accessible(page);
});
