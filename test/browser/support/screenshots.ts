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
    await world.launch('acme', [{ channel: 'ctv', adapterKey: 'sandbox-ctv', budgetMinor: 10_092 }], (b) =>
      b.lines.every((l) => l.status === 'reconciliation-required'),
    );
    const booking = await world.launch('acme', [
      { channel: 'ctv', adapterKey: 'manual', budgetMinor: 40_000 },
      { channel: 'dooh', adapterKey: 'sandbox-dooh', budgetMinor: 10_093 },
    ]);

    const page = await (await browser.newContext({ viewport: { width: 1366, height: 800 } })).newPage();
    await page.goto(`${world.base}/console`);
    await page.getByRole('link', { name: 'Sign in' }).click();
    await shot(page, 'sign-in');
    await page.goto(`${world.base}/console/logout`).catch(() => undefined);
    await signIn(
      page,
      world,
      { user: 'sam', workspace: 'acme', permissions: ['operator:reconcile', 'agent:approve'] },
      '/console/fulfilment',
    );
    await shot(page, 'fulfilment-queue');
    await page.locator('tbody tr').first().getByRole('link').click();
    await shot(page, 'booking-reconciliation');
    await page.goto(`${world.base}/console/fulfilment/bookings/${booking.id}`);
    await page.getByRole('button', { name: 'Claim' }).click();
    await shot(page, 'booking-claimed');

    const human = await world.token({ org: 'acme', user: 'sam', permissions: ['agent:approve'] });
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
  } finally {
    await browser.close();
    await world.close();
    await teardown();
  }
}

void main();
