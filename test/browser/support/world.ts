import AxeBuilder from '@axe-core/playwright';
import { expect, type Locator, type Page } from '@playwright/test';
import { loadDevIssuer, type DevIssuer, type DevTokenClaims } from '../../../shared/auth/dev-issuer';
import { createTokenVerifier } from '../../../shared/auth/verifier';
import { requiredQueues } from '../../../shared/queues/names';
import { createTestEnv, type TestApi, type TestEnv } from '../../support/api';
import { approve, draftCampaign, post, waitForBooking, type BookingBody, type PlanLineInput } from '../../support/bookings';
import { SPENDER_PERMISSIONS, TEST_AUDIENCE, TEST_ISSUER } from '../../support/issuer';
import { freePort } from '../../support/ports';

export interface ConsoleWorld {
  env: TestEnv;
  api: TestApi;
  /** Where people open the console (the redirect URL the identity provider knows). */
  base: string;
  issuer: DevIssuer;
  token(claims: Omit<DevTokenClaims, 'ttlSeconds'>): Promise<string>;
  launch(
    org: string,
    lines: PlanLineInput[],
    settled?: (b: BookingBody) => boolean,
    campaign?: Record<string, unknown>,
  ): Promise<BookingBody>;
  close(): Promise<void>;
}

const WORKFLOW_QUEUES = ['supplier.manual', 'supplier.computer-use'];

/**
 * The service as `npm start` runs it, for one spec file: its own database and Redis prefix, the
 * development issuer for API tokens and the embedded authorization server the console signs in
 * with, and workers for every queue but the workflow ones (staff move those lines). `workers` and
 * `apiSettings` add settings to each side.
 */
export async function startConsoleWorld(
  workers: Record<string, string> = {},
  apiSettings: Record<string, string> = {},
): Promise<ConsoleWorld> {
  const env = await createTestEnv();
  const port = await freePort();
  const base = `http://localhost:${port}`;
  const issuer = await loadDevIssuer(env.dataDir, TEST_AUDIENCE, TEST_ISSUER);
  const api = await env.api(
    { PORT: String(port), PUBLIC_BASE_URL: base, MCP_RESOURCE_URL: `${base}/mcp`, ...apiSettings },
    {
      auth: {
        verifier: createTokenVerifier({ issuer: issuer.issuer, audience: issuer.audience, jwks: issuer.jwks }),
        devIssuer: issuer,
        mode: 'development-issuer',
      },
    },
  );
  const queues = requiredQueues().filter((q) => !WORKFLOW_QUEUES.includes(q));
  // Warnings (a failed job, a refused outcome) go to the spec's output, where a failed spec's report keeps them.
  await env.workers({
    WORKER_QUEUES: queues.join(','),
    OUTBOX_RELAY_INTERVAL_MS: '50',
    SANDBOX_SLOW_MS: '60000',
    LOG_LEVEL: 'warn',
    ...workers,
  });
  // A person may spend unless the test names the permissions (docs/architecture.md, "Who may spend").
  const token = (claims: Omit<DevTokenClaims, 'ttlSeconds'>) =>
    issuer.sign({ ...(claims.agent ? {} : { permissions: SPENDER_PERMISSIONS }), ...claims });
  return {
    env,
    api,
    base,
    issuer,
    token,
    async launch(org, lines, settled = () => true, campaign = {}) {
      const buyer = await token({ org, user: `${org}-buyer` });
      const { campaignId, planVersion } = await draftCampaign(api, buyer, lines, campaign);
      await approve(api, buyer, campaignId, planVersion);
      const res = await post(api, buyer, `/api/v1/campaigns/${campaignId}/launch`);
      if (res.status !== 202) throw new Error(`launch failed: ${res.status} ${await res.text()}`);
      const { booking } = (await res.json()) as { booking: BookingBody };
      return waitForBooking(api, buyer, booking.id, settled);
    },
    async close() {
      // A failing page is easier to read with the service's own errors next to it.
      for (const line of api.logs) if (Number(line.level) >= 50) process.stderr.write(`${JSON.stringify(line)}\n`);
      await env.close();
    },
  };
}

export interface Person {
  user: string;
  workspace: string;
  permissions?: string[];
}

/** Signs in through the console's own flow: the development login of the embedded authorization server. */
export async function signIn(page: Page, world: ConsoleWorld, who: Person, path = '/console'): Promise<void> {
  await page.goto(`${world.base}${path}`);
  await expect(page).toHaveURL(/\/console\/login/);
  await accessible(page);
  await page.getByRole('link', { name: 'Sign in' }).click();
  await expect(page.getByLabel('User id')).toBeVisible();
  // The development login is a page like any other: its content in a main landmark.
  await expect(page.getByRole('main').getByRole('heading', { name: 'Sign in' })).toBeVisible();
  await accessible(page);
  await page.getByLabel('User id').fill(who.user);
  await page.getByLabel(/^Workspace/).fill(who.workspace);
  if (who.permissions) await page.getByLabel(/^Permissions/).fill(who.permissions.join(','));
  await page.getByRole('button', { name: 'Sign in' }).click();
  await expect(page.getByRole('button', { name: 'Sign out' })).toBeVisible();
}

/** No serious or critical accessibility violations on the page as it is now. */
export async function accessible(page: Page): Promise<void> {
  const { violations } = await new AxeBuilder({ page }).analyze();
  const bad = violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => `${v.id} (${v.impact}): ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`);
  expect(bad, `accessibility on ${page.url()}`).toEqual([]);
}

/** Every field a form requires says so in its label, not only in an attribute a sighted person never sees. */
export async function requiredMarked(page: Page): Promise<number> {
  const fields = await page.locator('input[required], textarea[required], select[required]').evaluateAll((els) =>
    els.map((el) => ({
      name: el.getAttribute('name'),
      label: (el as unknown as { labels: Array<{ textContent: string | null }> | null }).labels?.[0]?.textContent ?? '',
    })),
  );
  expect(
    fields.filter((f) => !f.label.includes('(required)')),
    `required fields without "(required)" in their label on ${page.url()}`,
  ).toEqual([]);
  return fields.length;
}

/** Computed style properties of an element, joined, as the browser renders them (test code has no DOM types). */
export function styleOf(locator: Locator, properties: string[]): Promise<string> {
  return locator.evaluate((el, names) => {
    const style = (globalThis as unknown as { getComputedStyle(e: unknown): Record<string, string> }).getComputedStyle(el);
    return names.map((n) => style[n]).join(' ');
  }, properties);
}
