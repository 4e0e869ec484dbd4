import { createHash } from 'node:crypto';
import { createTestEnv, json, type TestEnv } from '../support/api';
import { grantOps, revokeOps } from '../../shared/staff/ops-store';
import { grantStaff } from '../../shared/staff/staff-store';
import { startConsoleService, type ConsoleBrowser, type ConsoleService } from './support';

const DASHBOARD = '/admin/queues';
const QUEUES_API = `${DASHBOARD}/api/queues`;

let env: TestEnv;
let service: ConsoleService;
let unknownRoute: Record<string, unknown>;

beforeAll(async () => {
  env = await createTestEnv();
  service = await startConsoleService(env);
  for (const user of ['ops-a', 'ops-b', 'ops-c']) {
    await grantStaff(env.staff, user);
    await grantOps(env.db, user);
  }
  unknownRoute = await json(await fetch(`${service.base}/admin/nothing-here`));
});
afterAll(() => env.close());

/** Signs in at the console and presses "Open the queue dashboard". */
async function openDashboard(user: string): Promise<{ browser: ConsoleBrowser; opened: Response }> {
  const browser = await service.signIn({ user, workspace: 'staff-org' });
  await browser.page('/console/queues');
  const opened = await browser.form('/console/queues/dashboard', {});
  return { browser, opened };
}

const dashboardWith = (cookie: string, path = DASHBOARD) =>
  fetch(`${service.base}${path}`, { headers: { cookie: `fd_dashboard=${cookie}` }, redirect: 'manual' });

/** The 404 of an unknown route, request id aside: what the dashboard answers anyone it will not serve. */
async function expectUnknownRoute(res: Response) {
  expect(res.status).toBe(404);
  expect({ ...(await json(res)), requestId: null }).toEqual({ ...unknownRoute, requestId: null });
}

describe('the dashboard opened from the console', () => {
  test('its cookie holds a random session id, never the access token', async () => {
    const { browser, opened } = await openDashboard('ops-a');
    expect(opened.status).toBe(303);
    expect(opened.headers.get('location')).toBe(DASHBOARD);
    const setCookie = opened.headers.getSetCookie().find((c) => c.startsWith('fd_dashboard='))!;
    const attributes = setCookie.split(';').map((a) => a.trim().toLowerCase());
    expect(attributes).toEqual(expect.arrayContaining(['httponly', 'path=/admin/queues', 'samesite=strict', 'secure']));
    const id = browser.cookie('fd_dashboard')!;
    expect(id).toMatch(/^[A-Za-z0-9_-]{43}$/);
    // The id is no token: not a JWT, and nothing of the session's token.
    const session = JSON.parse((await env.redis.get(consoleSessionKey(browser)))!) as { accessToken: string };
    expect(id).not.toContain('.');
    for (const part of session.accessToken.split('.')) expect(setCookie).not.toContain(part);

    expect((await dashboardWith(id)).status).toBe(200);
    const queues = await dashboardWith(id, QUEUES_API);
    expect(queues.status).toBe(200);
    expect((await json<{ queues: unknown[] }>(queues)).queues.length).toBeGreaterThan(1);
  });

  test('signing out of the console ends the dashboard session: the same cookie gets the unknown route’s 404', async () => {
    const { browser } = await openDashboard('ops-b');
    const id = browser.cookie('fd_dashboard')!;
    expect((await dashboardWith(id)).status).toBe(200);
    const consoleKey = consoleSessionKey(browser);
    expect(await dashboardSessionsWith(consoleKey)).toHaveLength(1);
    const out = await browser.form('/console/logout', {});
    expect(out.status).toBe(303);
    // Both sessions are gone from Redis, not merely refused.
    expect(await env.redis.exists(consoleKey)).toBe(0);
    expect(await dashboardSessionsWith(consoleKey)).toHaveLength(0);
    for (const path of [DASHBOARD, QUEUES_API, `${DASHBOARD}/queue/maintenance`]) await expectUnknownRoute(await dashboardWith(id, path));
  });

  test('a console session that ends any other way (expired, deleted) takes its dashboard session with it', async () => {
    const { browser } = await openDashboard('ops-c');
    const id = browser.cookie('fd_dashboard')!;
    expect((await dashboardWith(id)).status).toBe(200);
    // The dashboard session lives no longer than the console session it was opened from.
    const consoleKey = consoleSessionKey(browser);
    const dashboardKeys = await dashboardSessionsWith(consoleKey);
    expect(dashboardKeys).toHaveLength(1);
    expect(await env.redis.ttl(dashboardKeys[0]!)).toBeLessThanOrEqual(await env.redis.ttl(consoleKey));
    await env.redis.del(consoleKey);
    await expectUnknownRoute(await dashboardWith(id));
  });

  test('revoking ops locks out an open dashboard session from its next request', async () => {
    await grantStaff(env.staff, 'ops-later');
    await grantOps(env.db, 'ops-later');
    const { browser } = await openDashboard('ops-later');
    const id = browser.cookie('fd_dashboard')!;
    expect((await dashboardWith(id)).status).toBe(200);
    await revokeOps(env.db, 'ops-later');
    await expectUnknownRoute(await dashboardWith(id));
    await expectUnknownRoute(await dashboardWith(id, QUEUES_API));
  });

  test('a raw access token in the dashboard cookie opens nothing', async () => {
    const token = await service.token({ org: 'staff-org', user: 'ops-a' });
    await expectUnknownRoute(await dashboardWith(token));
    await expectUnknownRoute(await dashboardWith(encodeURIComponent(token)));
    // Nor does the cookie the dashboard used to keep the token in.
    const legacy = await fetch(`${service.base}${DASHBOARD}`, {
      headers: { cookie: `flightdeck_admin_token=${encodeURIComponent(token)}` },
    });
    await expectUnknownRoute(legacy);
    // The same token as a bearer header is still ops' way in without a browser.
    expect((await fetch(`${service.base}${DASHBOARD}`, { headers: { authorization: `Bearer ${token}` } })).status).toBe(200);
  });
});

describe('the dashboard opened once with ?access_token=', () => {
  test('the token becomes a random session id in the cookie, not the token itself, with a 303 to the clean URL', async () => {
    const token = await service.token({ org: 'staff-org', user: 'ops-a' });
    const res = await fetch(`${service.base}${DASHBOARD}?access_token=${encodeURIComponent(token)}`, { redirect: 'manual' });
    expect(res.status).toBe(303);
    expect(res.headers.get('location')).toBe(DASHBOARD);
    const setCookie = res.headers.get('set-cookie')!;
    for (const part of token.split('.')) expect(setCookie).not.toContain(part);
    const id = /^fd_dashboard=([^;]+)/.exec(setCookie)![1]!;
    expect(id).toMatch(/^[A-Za-z0-9_-]{43}$/);
    // It lasts no longer than the token (an hour here).
    const [key] = await dashboardSessionsWith(token);
    expect(await env.redis.ttl(key!)).toBeGreaterThan(0);
    expect(await env.redis.ttl(key!)).toBeLessThanOrEqual(3600);
    expect((await dashboardWith(id)).status).toBe(200);
  });
});

/** The dashboard sessions in Redis whose record mentions `text` (the console session they are bound to, or their token). */
async function dashboardSessionsWith(text: string): Promise<string[]> {
  const keys = await env.redis.keys(`${env.prefix}:dashboard:session:*`);
  const values = await Promise.all(keys.map((k) => env.redis.get(k)));
  return keys.filter((_k, i) => values[i]?.includes(text));
}

/** The Redis key of the browser's console session (its cookie holds the id; Redis keys it by the id's hash). */
function consoleSessionKey(browser: ConsoleBrowser): string {
  return `${env.prefix}:console:session:${createHash('sha256').update(browser.cookie('fd_console')!).digest('hex')}`;
}
