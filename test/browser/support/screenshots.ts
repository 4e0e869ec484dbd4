// Regenerates the console screenshots in docs/console/: node --import tsx test/browser/support/screenshots.ts
import { randomUUID } from 'node:crypto';
import path from 'node:path';
import { chromium, type Page } from '@playwright/test';
import { assignClient, grantStaff } from '../../../shared/staff/staff-store';
import { grantOps } from '../../../shared/staff/ops-store';
import { fundWallet } from '../../support/wallet';
import { approve, draftCampaign, post } from '../../support/bookings';
import setup from '../../support/global-setup';
import teardown from '../../support/global-teardown';
import { signIn, startConsoleWorld } from './world';

const OUT = path.resolve(__dirname, '..', '..', '..', 'docs', 'console');

async function main() {
  await setup();
  const world = await startConsoleWorld();
  const browser = await chromium.launch({ executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium' });
  const shot = (page: Page, name: string) => page.screenshot({ path: path.join(OUT, `${name}.png`), fullPage: true });
  try {
    const { db } = world.env;
    await grantStaff(world.env.staff, 'sam');
    await grantOps(db, 'sam');
    await assignClient(world.env.staff, 'sam', 'acme');
    await fundWallet(world.env, 'acme', 250_000);
    // An older booking past its confirmation time, and one whose supplier lost its answer.
    const late = await world.launch('acme', [{ channel: 'ctv', adapterKey: 'manual', budgetMinor: 30_000 }], () => true, {
      name: 'Winter sale',
      clientName: 'Acme Drinks',
    });
    await db('bookings')
      .where({ id: late.id })
      .update({ confirmation_due_at: db.raw("now() - interval '3 hours 10 minutes'") });
    const mixed = await world.launch(
      'acme',
      [
        { channel: 'ctv', adapterKey: 'manual', budgetMinor: 40_000 },
        { channel: 'ctv', adapterKey: 'sandbox-ctv', budgetMinor: 10_092 },
        { channel: 'dooh', adapterKey: 'sandbox-dooh', budgetMinor: 10_000 },
      ],
      (b) => b.lines[1]!.status === 'reconciliation-required' && b.lines[2]!.status === 'confirmed',
      { name: 'Spring launch', clientName: 'Acme Drinks' },
    );

    const page = await (await browser.newContext({ viewport: { width: 1366, height: 800 } })).newPage();
    await page.goto(`${world.base}/console`);
    await page.getByRole('link', { name: 'Sign in' }).click();
    await shot(page, 'sign-in');
    await page.goto(`${world.base}/console/logout`).catch(() => undefined);
    await signIn(
      page,
      world,
      { user: 'sam', workspace: 'acme', permissions: ['operator:reconcile', 'agent:approve', 'campaign:launch'] },
      '/console',
    );

    // The manual line of the mixed booking, claimed: the queue shows who has it.
    await page.goto(`${world.base}/console/fulfilment/bookings/${mixed.id}`);
    const manual = page.locator(`section#line-${mixed.lines[0]!.id}`);
    await manual.getByRole('button', { name: 'Claim' }).click();
    await page.goto(`${world.base}/console/fulfilment`);
    await shot(page, 'fulfilment-queue');

    await page.goto(`${world.base}/console/fulfilment/bookings/${mixed.id}`);
    await shot(page, 'booking-reconciliation');

    await manual.getByRole('button', { name: 'Start' }).click();
    await shot(page, 'booking-claimed');

    // A refused form: resolve "applied" without the supplier's reference.
    const doubtful = page.locator(`section#line-${mixed.lines[1]!.id}`);
    await doubtful.getByLabel('Outcome').selectOption('applied');
    await doubtful
      .getByRole('textbox', { name: /^Evidence/ })
      .fill('Supplier portal shows the order as live; no reference visible to us yet.');
    await doubtful.getByRole('button', { name: 'Resolve' }).click();
    await page.getByRole('alert').scrollIntoViewIfNeeded();
    await page.screenshot({ path: path.join(OUT, 'booking-refused.png') });

    // Rejecting asks first.
    await manual
      .getByRole('group', { name: 'Reject' })
      .getByLabel('Evidence')
      .fill('Inventory sold out for the flight: supplier email of 24 Nov.');
    await manual.getByRole('button', { name: 'Reject…' }).click();
    await shot(page, 'reject-confirmation');

    await page.goto(`${world.base}/console/operator`);
    await shot(page, 'operator-bookings');

    const human = await world.token({ org: 'acme', user: 'sam', permissions: ['agent:approve', 'campaign:launch'] });
    await post(
      world.api,
      human,
      '/api/v1/agent/mandates/planner-bot',
      { allowedActions: ['campaign.launch'], budgetCeilingMinor: 1_000_000, currency: 'GBP' },
      'PUT',
    );
    const { campaignId, planVersion } = await draftCampaign(world.api, human, [
      { channel: 'ctv', adapterKey: 'manual', budgetMinor: 12_000 },
    ]);
    await approve(world.api, human, campaignId, planVersion);
    const agent = await world.token({ org: 'acme', user: 'sam', agent: 'planner-bot' });
    await post(world.api, agent, '/api/v1/agent/actions/prepare', {
      name: 'campaign.launch',
      parameters: { campaignId },
      budgetMinor: 12_000,
      currency: 'GBP',
    });
    await page.goto(`${world.base}/console/approvals`);
    await shot(page, 'agent-approvals');

    const res = await world.api.fetch('/api/v1/billing/topup/requests', {
      method: 'POST',
      token: human,
      headers: { 'content-type': 'application/json', 'idempotency-key': randomUUID() },
      body: JSON.stringify({ amountMinor: 15_000, currency: 'GBP' }),
    });
    const { request } = (await res.json()) as { request: { id: string; sessionId: string } };
    await page.goto(`${world.base}/console/operator/funding/${request.id}`);
    await page.getByLabel('Checkout session id').fill(request.sessionId);
    await page.getByRole('button', { name: /^Reconcile/ }).click();
    await shot(page, 'funding-reconcile');
    await page.goto(`${world.base}/console/queues`);
    await shot(page, 'queues');

    // A running sandbox campaign, paused at the console, then asked to stop.
    const running = await world.launch(
      'acme',
      [
        { channel: 'ctv', adapterKey: 'sandbox-ctv', budgetMinor: 20_000 },
        { channel: 'dooh', adapterKey: 'sandbox-dooh', budgetMinor: 15_000 },
      ],
      (b) => b.lines.every((l) => l.status === 'confirmed'),
      { name: 'Autumn push', clientName: 'Acme Drinks' },
    );
    await page.goto(`${world.base}/console/bookings/${running.id}`);
    const whole = page.getByRole('region', { name: 'The whole campaign' });
    await whole.getByRole('group', { name: 'Pause' }).getByLabel('Note (optional)').fill('Brand-safety review of the publisher list');
    await whole.getByRole('button', { name: 'Pause' }).click();
    for (let i = 0; i < 40 && (await page.locator('[data-stop-kind="paused"]').count()) < 2; i++) {
      await page.waitForTimeout(250);
      await page.reload();
    }
    await shot(page, 'campaign-paused');
    await page
      .getByRole('region', { name: /^Line 1 · ctv/ })
      .getByRole('button', { name: 'Stop…' })
      .click();
    await shot(page, 'stop-confirmation');
  } finally {
    await browser.close();
    await world.close();
    await teardown();
  }
}

void main();
