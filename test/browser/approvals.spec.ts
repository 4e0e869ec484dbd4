import { SPENDER_PERMISSIONS } from '../support/issuer';
import { expect, test } from '@playwright/test';
import { approve, draftCampaign, post } from '../support/bookings';
import { accessible, requiredMarked, signIn, startConsoleWorld, type ConsoleWorld } from './support/world';

const ORG = 'org-c';
const STEP = 'x-flightdeck-agent-step-id';
const DIGEST = 'x-flightdeck-agent-action-digest';
let world: ConsoleWorld;
let human: string;
let agent: string;

test.beforeAll(async () => {
  world = await startConsoleWorld();
  human = await world.token({ org: ORG, user: `${ORG}-lead`, permissions: ['agent:approve', ...SPENDER_PERMISSIONS] });
  agent = await world.token({ org: ORG, user: `${ORG}-lead`, agent: 'planner-bot' });
  const mandate = { allowedActions: ['campaign.launch'], budgetCeilingMinor: 1_000_000, currency: 'GBP' };
  const res = await post(world.api, human, '/api/v1/agent/mandates/planner-bot', mandate, 'PUT');
  expect(res.status).toBe(200);
});
test.afterAll(() => world?.close());

/** An agent prepares the launch of an approved campaign: exact parameters, money and digest. */
async function preparedLaunch() {
  const { campaignId, planVersion } = await draftCampaign(
    world.api,
    human,
    [{ channel: 'ctv', adapterKey: 'manual', budgetMinor: 12_000 }],
    {
      maximumCommitmentMinor: 15_000,
    },
  );
  await approve(world.api, human, campaignId, planVersion);
  const res = await post(world.api, agent, '/api/v1/agent/actions/prepare', {
    name: 'campaign.launch',
    parameters: { campaignId },
    budgetMinor: 15_000,
    currency: 'GBP',
  });
  expect(res.status).toBe(201);
  const prepared = (await res.json()) as { approvalId: string; actionDigest: string };
  return { campaignId, ...prepared };
}

test('a person approves the exact prepared action, and the agent executes exactly that', async ({ page }) => {
  const prepared = await preparedLaunch();
  await signIn(
    page,
    world,
    { user: `${ORG}-lead`, workspace: ORG, permissions: ['agent:approve', 'campaign:launch'] },
    '/console/approvals',
  );
  const section = page.locator('section', { hasText: prepared.approvalId });
  await expect(section.getByRole('heading', { name: 'campaign.launch' })).toBeVisible();
  await expect(section.locator('[data-digest]')).toHaveText(prepared.actionDigest);
  await expect(section).toContainText(prepared.campaignId);
  await expect(section).toContainText('GBP 150.00');
  await accessible(page);
  expect(await requiredMarked(page)).toBeGreaterThan(0);

  // Before approval the agent's execution is refused.
  const early = await world.api.fetch(`/api/v1/campaigns/${prepared.campaignId}/launch`, {
    method: 'POST',
    token: agent,
    headers: { [DIGEST]: prepared.actionDigest, [STEP]: '00000000-0000-4000-8000-000000000000' },
  });
  expect(early.status).toBeGreaterThanOrEqual(400);

  await section.getByRole('button', { name: 'Approve this exact action' }).click();
  await expect(page.getByRole('status')).toContainText('Approved');
  await accessible(page);

  // The agent learns its step id and executes with the approved digest.
  const read = await world.api.fetch(`/api/v1/agent/approvals/${prepared.approvalId}`, { token: agent });
  const { approval } = (await read.json()) as { approval: { status: string; executeStepId: string } };
  expect(approval.status).toBe('approved');
  const executed = await world.api.fetch(`/api/v1/campaigns/${prepared.campaignId}/launch`, {
    method: 'POST',
    token: agent,
    headers: { [STEP]: approval.executeStepId, [DIGEST]: prepared.actionDigest },
  });
  expect(executed.status).toBe(202);

  await page.reload();
  const row = page.locator('tr', { hasText: prepared.actionDigest });
  await expect(row.locator('[data-execution]')).toHaveText('succeeded');
  await expect(row).toContainText('approved');
});

test('abandoning needs a reason and leaves nothing to execute; a stale digest is refused', async ({ page }) => {
  const prepared = await preparedLaunch();
  await signIn(
    page,
    world,
    { user: `${ORG}-lead`, workspace: ORG, permissions: ['agent:approve', 'campaign:launch'] },
    '/console/approvals',
  );
  const section = page.locator('section', { hasText: prepared.approvalId });
  await section.getByLabel('Why abandon').fill('Not this quarter.');
  await section.getByRole('button', { name: 'Abandon' }).click();
  await expect(page.getByRole('status')).toContainText('Abandoned');
  const row = await world.env.db('agent_approvals').where({ id: prepared.approvalId }).first();
  expect(row.status).toBe('abandoned');
  expect(await world.env.db('agent_steps').where({ approval_id: prepared.approvalId, kind: 'execute' })).toHaveLength(0);

  // A form carrying a digest other than the approval's changes nothing.
  const csrf = await page.locator('input[name="_csrf"]').first().inputValue();
  const other = await preparedLaunch();
  const forged = await page.request.post(`${world.base}/console/approvals/${other.approvalId}/approve`, {
    form: { _csrf: csrf, expectedActionDigest: prepared.actionDigest },
    headers: { referer: `${world.base}/console/approvals` },
  });
  // Refused and shown over the approvals page it came from.
  expect(forged.url()).toBe(`${world.base}/console/approvals`);
  expect(await forged.text()).toContain('is not the digest of this approval');
  expect((await world.env.db('agent_approvals').where({ id: other.approvalId }).first()).status).toBe('pending');
});

test('a person without agent:approve gets no approvals page', async ({ page }) => {
  await signIn(page, world, { user: `${ORG}-viewer`, workspace: ORG });
  await expect(page.getByRole('link', { name: 'Agent approvals' })).toHaveCount(0);
  await page.goto(`${world.base}/console/approvals`);
  await expect(page.getByRole('heading', { name: 'Not allowed' })).toBeVisible();
  await accessible(page);
});
