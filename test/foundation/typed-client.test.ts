import fs from 'node:fs';
import path from 'node:path';
import { createFlightdeckClient } from '../../client';
import { createTestEnv, json, type TestApi, type TestEnv } from '../support/api';

let env: TestEnv;
let api: TestApi;
beforeAll(async () => {
  env = await createTestEnv();
  api = await env.api();
});
afterAll(() => env.close());

/** The generated client, its calls going through the test client so that each response is also checked against the document. */
const clientFor = (token: string) =>
  createFlightdeckClient('http://api.test', {
    headers: { authorization: `Bearer ${token}` },
    fetch: async (input: Request | string | URL) => {
      const req = input as Request;
      const url = new URL(req.url);
      const body = req.method === 'GET' ? undefined : await req.text();
      return api.fetch(`${url.pathname}${url.search}`, { method: req.method, headers: req.headers, ...(body ? { body } : {}) });
    },
  });

describe('the typed client generated from the OpenAPI document', () => {
  test('is generated from the document the service serves (npm run generate:client keeps them equal)', async () => {
    const committed = JSON.parse(fs.readFileSync(path.join(__dirname, '../../client/openapi.json'), 'utf8'));
    expect(await json(await api.fetch('/api/v1/openapi.json'))).toEqual(committed);
  });

  test('creates, reads and appends to a buyer session with typed requests and responses', async () => {
    const token = await env.issuer.token({ org: 'org-client', user: 'u-client', agent: 'planner-bot' });
    const client = clientFor(token);

    const context = await client.GET('/api/v1/auth/context');
    expect(context.response.status).toBe(200);

    const created = await client.POST('/api/v1/buyer/sessions', { body: { workflow: 'campaign_review' } });
    expect(created.response.status).toBe(201);
    const session = created.data!.session;
    expect(session).toMatchObject({ workflow: 'campaign_review', revision: 1, status: 'idle', messages: [] });

    const appended = await client.POST('/api/v1/buyer/sessions/{id}/messages', {
      params: { path: { id: session.id } },
      body: { revision: session.revision, role: 'user', message: 'Review the plan', requestId: crypto.randomUUID() },
    });
    expect(appended.response.status).toBe(200);
    expect(appended.data!.session.messages.map((m) => m.message)).toEqual(['Review the plan']);

    const read = await client.GET('/api/v1/buyer/sessions/{id}', { params: { path: { id: session.id } } });
    expect(read.data!.session.revision).toBe(appended.data!.session.revision);

    const missing = await client.GET('/api/v1/buyer/sessions/{id}', { params: { path: { id: crypto.randomUUID() } } });
    expect(missing.response.status).toBe(404);
    expect(missing.error).toMatchObject({ status: 404, code: 'not_found' });
  });
});
