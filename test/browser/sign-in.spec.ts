import { expect, test } from '@playwright/test';
import { assignClient, grantStaff } from '../../shared/staff/staff-store';
import { signIn, startConsoleWorld, type ConsoleWorld } from './support/world';

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
  await expect(page.getByRole('status')).toContainText('Done: claim');
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
