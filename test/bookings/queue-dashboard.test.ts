import { createTestEnv, json, type TestApi, type TestEnv } from '../support/api';
import { newSigningKey } from '../support/issuer';
import { assignClient, grantStaff } from '../../shared/staff/staff-store';
import { grantOps, revokeOps } from '../../shared/staff/ops-store';
import { post } from '../support/bookings';
import * as jobs from '../../shared/queues/jobs';
import { z } from 'zod';
import { jobQueues } from '../../shared/queues/names';
import { ADAPTERS } from '../../shared/adapters/catalogue';

const DASHBOARD = '/admin/queues';
const QUEUES_API = `${DASHBOARD}/api/queues`;

let env: TestEnv;
let api: TestApi;
const t: Record<string, string> = {};
beforeAll(async () => {
  env = await createTestEnv();
  api = await env.api({ RATE_LIMIT_MAX: '100000' });
  for (const user of ['ops-1', 'ops-revoked', 'ops-later-revoked']) await grantOps(env.db, user);
  await revokeOps(env.db, 'ops-revoked');
  // Staff membership, even with a client assigned, is not queue inspection.
  await grantStaff(env.staff, 'staff-only');
  await assignClient(env.staff, 'staff-only', 'org-a');
  t.staff = await env.issuer.token({ org: 'staff-org', user: 'ops-1' });
  t.staffOnly = await env.issuer.token({ org: 'staff-org', user: 'staff-only' });
  t.laterRevoked = await env.issuer.token({ org: 'staff-org', user: 'ops-later-revoked' });
  t.revoked = await env.issuer.token({ org: 'staff-org', user: 'ops-revoked' });
  t.agent = await env.issuer.token({ org: 'staff-org', user: 'ops-1', agent: 'bot' });
  t.customer = await env.issuer.token({
    org: 'org-a',
    user: 'org-a-admin',
    permissions: ['operator:reconcile', 'agent:approve', 'plan:approve', 'campaign:launch'],
  });
  t.forged = await env.issuer.token({ org: 'staff-org', user: 'ops-1', key: await newSigningKey() });
});
afterAll(() => env.close());

const get = (path: string, init: RequestInit & { token?: string } = {}) => api.fetch(path, { redirect: 'manual', ...init });
const cookieFrom = (res: Response) => res.headers.get('set-cookie')!.split(';')[0]!;

interface QueueView {
  name: string;
  readOnlyMode: boolean;
}

describe('ops with a bearer token', () => {
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
    expect(names).toEqual([...jobQueues()].sort());
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
    ['a staff member with an assigned client but no ops role', 'staffOnly'],
    ['a revoked ops member', 'revoked'],
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
    expect((await get(DASHBOARD, { headers: { cookie: 'fd_dashboard=not-a-session' } })).status).toBe(404);
  });

  test.each(['%E0%A4%A', '%', '%ZZ', '%C3%28', 'A'.repeat(43) + '%'])(
    'a cookie that is no session id (%s) is treated as no session: the same 404, never a 500',
    async (raw) => {
      for (const path of [DASHBOARD, QUEUES_API]) {
        const res = await get(path, { headers: { cookie: `other=1; fd_dashboard=${raw}` } });
        expect(res.status).toBe(404);
        expect({ ...(await json(res)), requestId: null }).toEqual({ ...unknownRoute, requestId: null });
      }
    },
  );
});

describe('signing in from a browser with ?access_token=', () => {
  test('a staff token opens a dashboard session whose id goes into an HttpOnly cookie scoped to the dashboard, with a 303 to the clean URL', async () => {
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
    ['a staff member without ops', 'staffOnly'],
    ['a revoked ops member', 'revoked'],
    ['a forged', 'forged'],
  ])('%s token gets 404 and no cookie', async (_who, key) => {
    const res = await get(`${DASHBOARD}?access_token=${encodeURIComponent(t[key]!)}`);
    expect(res.status).toBe(404);
    expect(res.headers.get('set-cookie')).toBeNull();
  });

  test('revoking ops locks out the cookie they already hold, from the next request', async () => {
    const signIn = await get(`${DASHBOARD}?access_token=${encodeURIComponent(t.laterRevoked!)}`);
    expect(signIn.status).toBe(303);
    const cookie = cookieFrom(signIn);
    expect((await get(DASHBOARD, { headers: { cookie } })).status).toBe(200);
    await revokeOps(env.db, 'ops-later-revoked');
    expect((await get(DASHBOARD, { headers: { cookie } })).status).toBe(404);
    expect((await get(QUEUES_API, { headers: { cookie } })).status).toBe(404);
  });
});

describe('what the dashboard shows of a job is ids only', () => {
  interface JobView {
    name: string;
    data: Record<string, unknown>;
    returnValue: unknown;
  }
  const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

  test('every job payload schema in the job contract holds uuids and nothing else', () => {
    const schemas = Object.entries(jobs).filter(([name]) => name.endsWith('JobSchema'));
    expect(schemas.map(([name]) => name).sort()).toEqual([
      'AudienceSyncJobSchema',
      'BookLineJobSchema',
      'CreativeReviewJobSchema',
      'DeliveryPollJobSchema',
      'EvaluateRulesJobSchema',
      'LineOperationJobSchema',
      'PersonaExtractJobSchema',
      'RunBrowserJobSchema',
    ]);
    for (const [name, schema] of schemas) {
      const json = z.toJSONSchema(schema as z.ZodType) as {
        properties: Record<string, { format?: string }>;
        additionalProperties: boolean;
      };
      expect([name, json.additionalProperties]).toEqual([name, false]);
      // A delivery poll and a rule cycle name the workspace whose clock moved (an opaque id, never a person's data).
      for (const [field, prop] of Object.entries(json.properties))
        if (!(['DeliveryPollJobSchema', 'EvaluateRulesJobSchema'].includes(name) && field === 'advertiserId'))
          expect([name, field, prop.format]).toEqual([name, field, 'uuid']);
    }
  });

  test("a persona extraction's brief and a launched booking's terms never reach the queues; every job's data is uuids", async () => {
    const workers = await env.workers();
    const buyer = await env.issuer.token({ org: 'org-a', user: 'buyer' });
    const brief = 'Zanzibar quokka enthusiasts aged 30 to 45 in Leeds';
    const extracted = await post(api, buyer, '/api/v1/personas/extract', { nlBrief: brief });
    expect(extracted.status).toBe(200);
    await workers.close();

    const res = await get(`${QUEUES_API}?activeQueue=persona-extract&status=latest&page=1&jobsPerPage=50`, { token: t.staff });
    expect(res.status).toBe(200);
    const text = await res.text();
    const { queues } = JSON.parse(text) as { queues: Array<{ name: string; jobs: JobView[] }> };
    const jobs = queues.find((q) => q.name === 'persona-extract')!.jobs;
    expect(jobs.length).toBeGreaterThan(0);
    for (const job of jobs) {
      expect(Object.keys(job.data)).toEqual(['requestId']);
      expect(job.data.requestId).toMatch(UUID);
    }
    for (const word of ['Zanzibar', 'quokka', 'enthusiasts']) expect(text).not.toContain(word);
  });
});
