import { expect, test, type Page } from '@playwright/test';
import { accessible, signIn, startConsoleWorld, type ConsoleWorld } from './support/world';

/** An advertiser pauses, resumes and stops a running sandbox campaign by clicking, and reads where each line stands. */
const ORG = 'org-fly';
let world: ConsoleWorld;

test.beforeAll(async () => {
  world = await startConsoleWorld();
});
test.afterAll(() => world?.close());

/**
 * How each line says it runs and its status, reloading the page (it shows what is true when
 * loaded) until they all say `kind` at `status`. The words change at the request, the status
 * when the supplier has answered: the controls shown depend on the status, so wait for both.
 */
async function linesRead(page: Page, kind: string, status: string) {
  await expect
    .poll(
      async () => {
        await page.reload();
        return page
          .locator('section.line')
          .evaluateAll((els) =>
            els.map((e) => [
              e.querySelector('[data-stop-kind]')?.getAttribute('data-stop-kind'),
              e.querySelector('[data-line-status]')?.textContent,
            ]),
          );
      },
      { timeout: 20_000 },
    )
    .toEqual([
      [kind, status],
      [kind, status],
    ]);
}

test('pause, resume and stop a running campaign by clicking; the stop asks first and is final', async ({ page }) => {
  const booking = await world.launch(
    ORG,
    [
      { channel: 'ctv', adapterKey: 'sandbox-ctv', budgetMinor: 10_000 },
      { channel: 'dooh', adapterKey: 'sandbox-dooh', budgetMinor: 12_000 },
    ],
    (b) => b.lines.every((l) => l.status === 'confirmed'),
    { name: 'Autumn push', clientName: 'Acme Drinks' },
  );
  await signIn(page, world, { user: `${ORG}-buyer`, workspace: ORG });
  await page.getByRole('navigation', { name: 'Console' }).getByRole('link', { name: 'Campaigns' }).click();
  await page.getByRole('link', { name: 'Autumn push' }).click();
  await expect(page.getByRole('heading', { level: 1 })).toHaveText('Campaign Autumn push');
  await accessible(page);
  const whole = page.getByRole('region', { name: 'The whole campaign' });
  await expect(whole.getByRole('button', { name: 'Resume' })).toHaveCount(0);

  await whole.getByRole('group', { name: 'Pause' }).getByLabel('Note (optional)').fill('Brand-safety review');
  await whole.getByRole('button', { name: 'Pause' }).click();
  await expect(page.getByRole('status')).toHaveText('The campaign is being paused: asked of 2 lines.');
  await linesRead(page, 'paused', 'stopped');
  await expect(page.getByRole('region', { name: /^Line 1 · ctv/ }).locator('[data-stop-kind]')).toHaveText('paused: it can be resumed');
  await accessible(page);

  await whole.getByRole('button', { name: 'Resume' }).click();
  await expect(page.getByRole('status')).toHaveText('The campaign is being resumed: asked of 2 lines.');
  await linesRead(page, 'running', 'confirmed');

  // Stopping asks first; going back changes nothing.
  await whole.getByRole('button', { name: 'Stop…' }).click();
  await expect(page.getByRole('heading', { level: 1 })).toHaveText('Stop the campaign Autumn push?');
  await expect(page.getByText('Stopping cannot be undone.')).toBeVisible();
  await accessible(page);
  await page.getByRole('link', { name: 'No, go back' }).click();
  await expect(page.locator('[data-stop-kind]')).toHaveText(['running', 'running']);

  await whole.getByRole('button', { name: 'Stop…' }).click();
  await page.getByRole('button', { name: 'Yes, stop the campaign Autumn push' }).click();
  await expect(page.getByRole('status')).toHaveText('The campaign is being stopped: asked of 2 lines.');
  await linesRead(page, 'ended', 'stopped');
  await expect(page.getByText('Nothing can be asked of the whole campaign now.')).toBeVisible();
  await expect(page.getByRole('button', { name: 'Resume' })).toHaveCount(0);
  const lines = await world.env.db('booking_lines').where({ booking_id: booking.id }).select('status', 'stop');
  expect(lines.map((l) => [l.status, l.stop.kind])).toEqual([
    ['stopped', 'end'],
    ['stopped', 'end'],
  ]);
  await accessible(page);
});
