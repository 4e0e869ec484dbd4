import { createTestEnv, json, type TestApi, type TestEnv } from '../support/api';
import { newSigningKey } from '../support/issuer';
import { assignClient, grantStaff, revokeStaff } from '../../shared/staff/staff-store';
import { requiredQueues } from '../../shared/queues/names';
import { ADAPTERS } from '../../shared/adapters/catalogue';

const DASHBOARD = '/admin/queues';
const QUEUES_API = `${DASHBOARD}/api/queues`;

let env: TestEnv;
let api: TestApi;
const t: Record<string, string> = {};
beforeAll(async () => {
  env = await createTestEnv();
  api = await env.api({ RATE_LIMIT_MAX: '100000' });
  for (const user of ['ops-1', 'ops-revoked', 'ops-later-revoked']) await grantStaff(env.db, user);
  await assignClient(env.db, 'ops-1', 'org-a');
  await revokeStaff(env.db, 'ops-revoked');
  t.staff = await env.issuer.token({ org: 'staff-org', user: 'ops-1' });
  t.laterRevoked = await env.issuer.token({ org: 'staff-org', user: 'ops-later-revoked' });
  t.revoked = await env.issuer.token({ org: 'staff-org', user: 'ops-revoked' });
  t.agent = await env.issuer.token({ org: 'staff-org', user: 'ops-1', agent: 'bot' });
  t.customer = await env.issuer.token({ org: 'org-a', user: 'org-a-admin', permissions: ['operator:reconcile', 'agent:approve'] });
  t.forged = await env.issuer.token({ org: 'staff-org', user: 'ops-1', key: await newSigningKey() });
});
afterAll(() => env.close());

const get = (path: string, init: RequestInit & { token?: string } = {}) => api.fetch(path, { redirect: 'manual', ...init });
const cookieFrom = (res: Response) => res.headers.get('set-cookie')!.split(';')[0]!;

interface QueueView {
  name: string;
  readOnlyMode: boolean;
}

describe('staff with a bearer token', () => {
  test('the dashboard page is served as HTML', async () => {
    const res = await get(DASHBOARD, { token: t.staff });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/html/);
    expect(await res.text()).toMatch(/<html/i);
  });

  test("bull-board's queue API lists every queue the workers consume: one per supplier adapter, reviews, personas, audiences, maintenance", async () => {
    const res = await get(QUEUES_API, { token: t.staff });
    expect(res.status).toBe(200);
    const { queues } = await json<{ queues: QueueView[] }>(res);
    const names = queues.map((q) => q.name).sort();
    expect(names).toEqual([...requiredQueues()].sort());
    expect(names).toEqual(
      expect.arrayContaining(['maintenance', 'persona-extract', 'audience-sync', ...ADAPTERS.map((a) => `supplier.${a.key}`)]),
    );
    for (const key of ['sandbox-ctv', 'sandbox-social', 'manual', 'computer-use', 'native-staged', 'live-tv']) {
      expect(names).toContain(`supplier.${key}`);
    }
  });

  test('supplier queues are read-only on the dashboard; maintenance is not', async () => {
    const { queues } = await json<{ queues: QueueView[] }>(await get(QUEUES_API, { token: t.staff }));
    for (const q of queues) expect([q.name, q.readOnlyMode]).toEqual([q.name, q.name !== 'maintenance']);
    const retry = await get(`${QUEUES_API}/supplier.sandbox-ctv/retry/failed`, { method: 'PUT', token: t.staff });
    expect(retry.status).toBe(405);
  });
});

describe('everyone else gets the same 404 as an unknown route', () => {
  let unknownRoute: Record<string, unknown>;
  beforeAll(async () => {
    unknownRoute = await json(await get('/admin/nothing-here'));
  });

  test.each([
    ['no token', undefined],
    ['a customer with every customer permission', 'customer'],
    ['a delegated agent acting for a staff member', 'agent'],
    ['a revoked staff member', 'revoked'],
    ['a token signed by an unknown key', 'forged'],
  ])('%s gets 404 from the page and the queue API', async (_who, key) => {
    for (const path of [DASHBOARD, QUEUES_API, `${DASHBOARD}/queue/supplier.manual`]) {
      const res = await get(path, key ? { token: t[key] } : {});
      expect(res.status).toBe(404);
      expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
      expect({ ...(await json(res)), requestId: null }).toEqual({ ...unknownRoute, requestId: null });
    }
  });

  test('a malformed bearer header or cookie gets 404', async () => {
    expect((await get(DASHBOARD, { headers: { authorization: 'Bearer not-a-jwt' } })).status).toBe(404);
    expect((await get(DASHBOARD, { headers: { cookie: 'flightdeck_admin_token=not-a-jwt' } })).status).toBe(404);
  });
});

describe('signing in from a browser with ?access_token=', () => {
  test('a staff token becomes an HttpOnly cookie scoped to the dashboard, with a 303 to the clean URL', async () => {
    const res = await get(`${DASHBOARD}?access_token=${encodeURIComponent(t.staff!)}`);
    expect(res.status).toBe(303);
    expect(res.headers.get('location')).toBe(DASHBOARD);
    const setCookie = res.headers.get('set-cookie')!;
    const attributes = setCookie.split(';').map((a) => a.trim().toLowerCase());
    expect(attributes).toEqual(expect.arrayContaining(['httponly', 'path=/admin/queues', 'samesite=strict']));
    expect(attributes.some((a) => a.startsWith('domain='))).toBe(false);

    const page = await get(res.headers.get('location')!, { headers: { cookie: cookieFrom(res) } });
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toMatch(/^text\/html/);
    const queues = await get(QUEUES_API, { headers: { cookie: cookieFrom(res) } });
    expect(queues.status).toBe(200);
    expect((await json<{ queues: QueueView[] }>(queues)).queues.length).toBeGreaterThan(1);
  });

  test('the token never reaches the logs', async () => {
    const token = await env.issuer.token({ org: 'staff-org', user: 'ops-1' });
    expect((await get(`${DASHBOARD}?access_token=${encodeURIComponent(token)}`)).status).toBe(303);
    const logged = () => api.logs.some((l) => (l.res as { statusCode?: number } | undefined)?.statusCode === 303);
    for (let i = 0; i < 50 && !logged(); i++) await new Promise((r) => setTimeout(r, 20));
    expect(logged()).toBe(true);
    expect(api.rawLogs.join('\n')).not.toContain(token);
    expect(api.rawLogs.join('\n')).not.toContain(token.split('.')[2]!);
  });

  test.each([
    ['a customer', 'customer'],
    ['a delegated agent', 'agent'],
    ['a revoked staff member', 'revoked'],
    ['a forged', 'forged'],
  ])('%s token gets 404 and no cookie', async (_who, key) => {
    const res = await get(`${DASHBOARD}?access_token=${encodeURIComponent(t[key]!)}`);
    expect(res.status).toBe(404);
    expect(res.headers.get('set-cookie')).toBeNull();
  });

  test('revoking a staff member locks out the cookie they already hold', async () => {
    const signIn = await get(`${DASHBOARD}?access_token=${encodeURIComponent(t.laterRevoked!)}`);
    expect(signIn.status).toBe(303);
    const cookie = cookieFrom(signIn);
    expect((await get(DASHBOARD, { headers: { cookie } })).status).toBe(200);
    await revokeStaff(env.db, 'ops-later-revoked');
    expect((await get(DASHBOARD, { headers: { cookie } })).status).toBe(404);
    expect((await get(QUEUES_API, { headers: { cookie } })).status).toBe(404);
  });
});
