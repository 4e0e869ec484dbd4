import { expect, test, type Page } from '@playwright/test';
import { assignClient, grantStaff } from '../../shared/staff/staff-store';
import { accessible, requiredMarked, signIn, startConsoleWorld, styleOf, type ConsoleWorld } from './support/world';

/** Staff working lines all day: what they read, in which order, and what the forms do with what they typed. */
const ORG = 'org-w';
let world: ConsoleWorld;

test.beforeAll(async () => {
  world = await startConsoleWorld();
  for (const user of ['staff-w1', 'staff-w2']) {
    await grantStaff(world.env.staff, user);
    await assignClient(world.env.staff, user, ORG);
  }
});
test.afterAll(() => world?.close());

const section = (page: Page, lineId: string) => page.locator(`section#line-${lineId}`);
const STAFF_1 = { user: 'staff-w1', workspace: 'staff-org' };
const STAFF_2 = { user: 'staff-w2', workspace: 'staff-org' };

test('whoever resolves a line reads why it was flagged: each line’s evidence and each event’s detail, with who and when', async ({
  page,
  browser,
}) => {
  const booking = await world.launch(ORG, [{ channel: 'ctv', adapterKey: 'manual', budgetMinor: 20_000 }]);
  const line = booking.lines[0]!;
  const flagged = 'The supplier desk took the order by phone but sent no insertion order; reference unknown.';

  // One member claims, starts and flags the line at the console.
  await signIn(page, world, STAFF_1, `/console/fulfilment/bookings/${booking.id}`);
  await page.getByRole('button', { name: 'Claim' }).click();
  await page.getByRole('button', { name: 'Start' }).click();
  await section(page, line.id).getByRole('group', { name: 'Outcome uncertain' }).getByLabel('Evidence').fill(flagged);
  await page.getByRole('button', { name: 'Mark uncertain' }).click();
  await expect(page.getByRole('status')).toContainText('marked uncertain');

  // Another member, in another browser, opens it to resolve it and reads why.
  const context = await browser.newContext();
  const other = await context.newPage();
  await signIn(other, world, STAFF_2, `/console/fulfilment/bookings/${booking.id}`);
  const trail = section(other, line.id).getByRole('list', { name: 'Evidence and reasons' });
  const flaggedEntry = trail.getByRole('listitem').filter({ hasText: 'Marked uncertain' });
  await expect(flaggedEntry).toContainText(flagged);
  await expect(flaggedEntry).toContainText('staff-w1 (human, web)');
  const when = await flaggedEntry.locator('time').getAttribute('datetime');
  const event = (await world.env.db('booking_events').where({ line_id: line.id, action: 'line.marked-uncertain' }).first()) as {
    created_at: Date;
  };
  expect(when).toBe(event.created_at.toISOString());
  await accessible(other);

  const resolved = 'Supplier confirmed in writing: IO-5521 signed, flight dates as booked.';
  await other.getByLabel('Outcome').selectOption('applied');
  await other.getByLabel('Provider reference').fill('IO-5521');
  await section(other, line.id).getByRole('group', { name: 'Resolve from evidence' }).getByLabel('Evidence').fill(resolved);
  await other.getByRole('button', { name: 'Resolve' }).click();
  await expect(other.getByRole('status')).toContainText('resolved as applied');

  // Newest first: the resolution, then the flag, each with who wrote it; neither overwrites the other.
  const entries = trail.getByRole('listitem');
  await expect(entries.first()).toContainText('Resolved from evidence');
  await expect(entries.first()).toContainText(resolved);
  await expect(entries.first()).toContainText('staff-w2 (human, web)');
  await expect(entries.first()).toContainText('IO-5521');
  await expect(trail.getByRole('listitem').filter({ hasText: 'Marked uncertain' })).toContainText(flagged);

  // The timeline shows each event's detail, the evidence included.
  const history = other.getByRole('list', { name: 'Events, newest first' });
  await expect(history.getByRole('listitem').filter({ hasText: 'line.marked-uncertain' })).toContainText(flagged);
  await expect(history.getByRole('listitem').filter({ hasText: 'line.resolved' })).toContainText(resolved);
  await accessible(other);
  await context.close();
});

test('a line the service handed to a person says why: the supplier’s answer was lost', async ({ page }) => {
  const booking = await world.launch(ORG, [{ channel: 'ctv', adapterKey: 'sandbox-ctv', budgetMinor: 10_092 }], (b) =>
    b.lines.every((l) => l.status === 'reconciliation-required'),
  );
  const line = booking.lines[0]!;
  const event = booking.events.find((e) => e.action === 'line.reconciliation-required')!;
  await signIn(page, world, STAFF_1, `/console/fulfilment/bookings/${booking.id}`);
  const entry = section(page, line.id).getByRole('list', { name: 'Evidence and reasons' }).getByRole('listitem').first();
  await expect(entry).toContainText('Handed to a person');
  await expect(entry).toContainText('flightdeck (system, system)');
  await expect(entry).toContainText(String(event.detail!.reason));
});

test('lines needing a person come first, each status a badge coloured by what it asks, the timeline newest first naming lines as their sections', async ({
  page,
}) => {
  const booking = await world.launch(
    ORG,
    [
      { channel: 'ctv', adapterKey: 'manual', budgetMinor: 40_000 },
      { channel: 'ctv', adapterKey: 'sandbox-ctv', budgetMinor: 10_092 },
      { channel: 'dooh', adapterKey: 'sandbox-dooh', budgetMinor: 10_000 },
    ],
    (b) => b.lines[1]!.status === 'reconciliation-required' && b.lines[2]!.status === 'confirmed',
  );
  const [manual, doubtful, done] = booking.lines as [(typeof booking.lines)[0], (typeof booking.lines)[0], (typeof booking.lines)[0]];
  await signIn(page, world, STAFF_1, `/console/fulfilment/bookings/${booking.id}`);

  // The line to reconcile first, then open work nobody has, then what is settled; named by their place in the plan.
  const headings = await page.locator('section.line > h2').allTextContents();
  expect(headings.map((h) => h.replace(/\s+/g, ' ').trim())).toEqual([
    'Line 2 · ctv · sandbox-ctv ⚠ reconciliation-required',
    'Line 1 · ctv · manual ◷ queued',
    'Line 3 · dooh · sandbox-dooh ✓ confirmed',
  ]);
  const needs = page.getByRole('region', { name: 'Needs a person now' });
  await expect(needs.getByRole('link', { name: 'Line 2 · ctv · sandbox-ctv' })).toHaveAttribute('href', `#line-${doubtful.id}`);

  // reconciliation-required and confirmed no longer look alike.
  const colours = (lineId: string) => styleOf(section(page, lineId).locator('h2 .status'), ['backgroundColor', 'borderColor', 'color']);
  const [attention, confirmed, queued] = [await colours(doubtful.id), await colours(done.id), await colours(manual.id)];
  expect(new Set([attention, confirmed, queued]).size).toBe(3);

  // Newest first, each event on a line named and linked as that line's section is headed.
  // Newest first: the reverse of the order the booking recorded them in (its events as the API returns them).
  const recorded = await world.api.fetch(`/api/v1/bookings/${booking.id}`, {
    token: await world.token({ org: ORG, user: `${ORG}-buyer` }),
  });
  const { booking: now } = (await recorded.json()) as { booking: { events: Array<{ action: string; createdAt: string }> } };
  const shown = await page.locator('ol.timeline > li > p > code').allTextContents();
  expect(shown.length).toBeGreaterThan(5);
  expect(shown).toEqual(now.events.map((e) => e.action).reverse());
  await expect(page.locator('ol.timeline > li time').first()).toHaveAttribute('datetime', now.events.at(-1)!.createdAt);
  const handed = page.locator('ol.timeline > li', { hasText: 'line.reconciliation-required' });
  await expect(handed.getByRole('link', { name: 'Line 2 · ctv · sandbox-ctv' })).toHaveAttribute('href', `#line-${doubtful.id}`);
  await expect(page.locator('ol.timeline > li').last()).toContainText('booking.launched');
  await accessible(page);
});

test('the queue says who claimed what, and when each booking is due in the viewer’s zone, with how overdue it is', async ({ page }) => {
  const claimedBooking = await world.launch(ORG, [{ channel: 'ctv', adapterKey: 'manual', budgetMinor: 21_000 }]);
  const other = await world.token({ org: 'staff-org', user: 'staff-w2' });
  const line = claimedBooking.lines[0]!;
  const res = await world.api.fetch(`/api/v1/internal/fulfilment/bookings/${claimedBooking.id}/lines/${line.id}/claim`, {
    method: 'POST',
    token: other,
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ expectedVersion: line.version }),
  });
  expect(res.status).toBe(200);
  const late = await world.launch(ORG, [{ channel: 'ctv', adapterKey: 'manual', budgetMinor: 22_000 }]);
  const { db } = world.env;
  await db('bookings')
    .where({ id: late.id })
    .update({ confirmation_due_at: db.raw("now() - interval '3 hours 10 minutes'") });
  const dueAt = ((await db('bookings').where({ id: late.id }).first()) as { confirmation_due_at: Date }).confirmation_due_at;

  await signIn(page, world, STAFF_1, '/console/fulfilment?limit=100');
  const claimedRow = page.getByRole('row').filter({ hasText: claimedBooking.id.slice(0, 8) });
  await expect(claimedRow).toContainText('Line 1 · ctv · manual');
  await expect(claimedRow.locator('[data-claimed-by]')).toHaveText('staff-w2');
  const lateRow = page.getByRole('row').filter({ hasText: late.id.slice(0, 8) });
  await expect(lateRow).toContainText('unclaimed');
  await expect(lateRow.locator('[data-due]')).toHaveText(/^overdue by 3 h 1\d min$/);
  const time = lateRow.locator('time');
  await expect(time).toHaveAttribute('datetime', dueAt.toISOString());
  const inZone = (zone: string) =>
    new Intl.DateTimeFormat('en-GB', {
      timeZone: zone,
      day: 'numeric',
      month: 'short',
      year: 'numeric',
      hour: '2-digit',
      minute: '2-digit',
      timeZoneName: 'short',
    }).format(dueAt);
  await expect(time).toHaveText(inZone('UTC'));

  // The viewer says where they are once; every time follows.
  await page.getByRole('link', { name: 'Times in UTC' }).click();
  await accessible(page);
  await page.getByLabel('Time zone').selectOption('America/New_York');
  await page.getByRole('button', { name: 'Show times in this zone' }).click();
  await expect(page.getByRole('status')).toHaveText('Times are now shown in America/New_York.');
  await page.goto(`${world.base}/console/fulfilment?limit=100`);
  await expect(page.getByRole('link', { name: 'Times in America/New_York' })).toBeVisible();
  await expect(
    page
      .getByRole('row')
      .filter({ hasText: late.id.slice(0, 8) })
      .locator('time'),
  ).toHaveText(inZone('America/New_York'));
  expect(inZone('America/New_York')).not.toEqual(inZone('UTC'));
});

test('rejecting asks for confirmation on a page of its own, looks unlike confirming, and going back keeps what was typed', async ({
  page,
}) => {
  const booking = await world.launch(ORG, [{ channel: 'ctv', adapterKey: 'manual', budgetMinor: 23_000 }]);
  const line = booking.lines[0]!;
  await signIn(page, world, STAFF_1, `/console/fulfilment/bookings/${booking.id}`);
  await page.getByRole('button', { name: 'Claim' }).click();
  await page.getByRole('button', { name: 'Start' }).click();
  const background = (name: string) => styleOf(page.getByRole('button', { name, exact: true }), ['backgroundColor']);
  expect(await background('Reject…')).not.toEqual(await background('Confirm'));

  const why = 'Inventory sold out for the flight: supplier email of 24 Nov.';
  const reject = page.getByRole('group', { name: 'Reject' });
  await reject.getByRole('textbox').fill(why);
  await reject.getByRole('button', { name: 'Reject…' }).click();
  await expect(page.getByRole('heading', { name: 'Reject Line 1 · ctv · manual?' })).toBeVisible();
  await expect(page.getByText('Rejecting cannot be undone.')).toBeVisible();
  await expect(page.locator('blockquote')).toHaveText(why);
  await accessible(page);
  expect((await world.env.db('booking_lines').where({ id: line.id }).first()).status).toBe('in-progress');

  await page.getByRole('link', { name: 'No, go back to the line' }).click();
  await expect(page).toHaveURL(new RegExp(`/console/fulfilment/bookings/${booking.id}#line-${line.id}$`));
  await expect(page.getByRole('group', { name: 'Reject' }).getByRole('textbox')).toHaveValue(why);
  expect((await world.env.db('booking_lines').where({ id: line.id }).first()).status).toBe('in-progress');

  await page.getByRole('group', { name: 'Reject' }).getByRole('button', { name: 'Reject…' }).click();
  await page.getByRole('button', { name: 'Yes, reject Line 1 · ctv · manual' }).click();
  await expect(page.getByRole('status')).toHaveText('Line 1 · ctv · manual rejected.');
  expect(await world.env.db('booking_lines').where({ id: line.id }).first()).toMatchObject({ status: 'rejected', evidence: why });
});

test('a refused form keeps what was typed and says once, in words, which line and which field; fixed, it goes through', async ({
  page,
}) => {
  const booking = await world.launch(ORG, [{ channel: 'ctv', adapterKey: 'sandbox-ctv', budgetMinor: 11_092 }], (b) =>
    b.lines.every((l) => l.status === 'reconciliation-required'),
  );
  const line = booking.lines[0]!;
  const before = await world.env.db('booking_lines').where({ id: line.id }).first();
  const events = await world.env.db('booking_events').where({ booking_id: booking.id }).count();
  await signIn(page, world, STAFF_1, `/console/fulfilment/bookings/${booking.id}`);
  expect(await requiredMarked(page)).toBeGreaterThan(2);

  // "Applied" needs the supplier's reference; the browser cannot know that, the service refuses it.
  const why = 'Supplier portal shows the order as live; their account manager confirmed by phone.';
  const resolve = page.getByRole('group', { name: 'Resolve from evidence' });
  await resolve.getByLabel('Outcome').selectOption('applied');
  await resolve.getByRole('textbox', { name: /^Evidence/ }).fill(why);
  await resolve.getByRole('button', { name: 'Resolve' }).click();

  const message = 'Line 1 · ctv · sandbox-ctv: Provider reference: Required to confirm a booking. Nothing was changed.';
  await expect(page.getByRole('alert')).toHaveText(message);
  await expect(page.getByRole('alert')).toHaveCount(1);
  expect((await page.locator('main').innerText()).split('Required to confirm a booking').length - 1).toBe(1);
  await expect(page).toHaveURL(new RegExp(`#line-${line.id}$`));
  const again = page.getByRole('group', { name: 'Resolve from evidence' });
  await expect(again.getByRole('textbox', { name: /^Evidence/ })).toHaveValue(why);
  await expect(again.getByLabel('Outcome')).toHaveValue('applied');
  const reference = again.getByLabel(/^Provider reference/);
  await expect(reference).toHaveAttribute('aria-invalid', 'true');
  await expect(reference).toHaveAttribute('aria-describedby', 'flash');
  await expect(again.getByRole('textbox', { name: /^Evidence/ })).not.toHaveAttribute('aria-invalid', 'true');
  await accessible(page);
  expect(await world.env.db('booking_lines').where({ id: line.id }).first()).toEqual(before);
  expect(await world.env.db('booking_events').where({ booking_id: booking.id }).count()).toEqual(events);

  // Fixed, it goes through, and says so naming the line; nothing of the refused form is left behind.
  await reference.fill('IO-7781');
  await again.getByRole('button', { name: 'Resolve' }).click();
  await expect(page.getByRole('status')).toHaveText('Line 1 · ctv · sandbox-ctv resolved as applied: confirmed.');
  await page.reload();
  await expect(page.getByRole('alert')).toHaveCount(0);
  expect(await world.env.db('booking_lines').where({ id: line.id }).first()).toMatchObject({ status: 'confirmed', evidence: why });
});

test('a form the service refuses for a short field names the field and its rule, and keeps the other fields', async ({ page }) => {
  const booking = await world.launch(ORG, [{ channel: 'ctv', adapterKey: 'manual', budgetMinor: 24_000 }]);
  await signIn(page, world, STAFF_1, `/console/fulfilment/bookings/${booking.id}`);
  await page.getByRole('button', { name: 'Claim' }).click();
  await page.getByRole('button', { name: 'Start' }).click();
  const confirm = page.getByRole('group', { name: 'Confirm' });
  // Spaces satisfy the browser's "required"; the service trims them and refuses.
  await confirm.getByLabel(/^Provider reference/).fill('   ');
  await confirm.getByRole('textbox', { name: /^Evidence/ }).fill('Signed insertion order from the supplier desk, 24 Nov.');
  await confirm.getByRole('button', { name: 'Confirm' }).click();
  await expect(page.getByRole('alert')).toHaveText(
    'Line 1 · ctv · manual: Provider reference is required (spaces alone do not count). Nothing was changed.',
  );
  await expect(page.getByRole('group', { name: 'Confirm' }).getByRole('textbox', { name: /^Evidence/ })).toHaveValue(
    'Signed insertion order from the supplier desk, 24 Nov.',
  );
  await expect(page.getByRole('group', { name: 'Confirm' }).getByLabel(/^Provider reference/)).toHaveAttribute('aria-invalid', 'true');
  expect(await requiredMarked(page)).toBeGreaterThan(3);
});
