import http from 'node:http';
import { randomUUID } from 'node:crypto';
import { createTestEnv, json, type TestApi, type TestEnv } from '../support/api';
import { post } from '../support/bookings';

let env: TestEnv;
let api: TestApi;
beforeAll(async () => {
  env = await createTestEnv();
  api = await env.api();
});
afterAll(() => env.close());

const id = randomUUID();
/** Method and OpenAPI path of every measurement route. */
const ROUTES: Array<[string, string]> = [
  ['GET', '/api/v1/measurement/markets'],
  ['POST', '/api/v1/campaigns/{id}/outcomes'],
  ['GET', '/api/v1/campaigns/{id}/outcomes'],
  ['POST', '/api/v1/campaigns/{id}/geo-lift-designs'],
  ['GET', '/api/v1/campaigns/{id}/geo-lift-designs'],
  ['POST', '/api/v1/campaigns/{id}/prove-it'],
  ['GET', '/api/v1/campaigns/{id}/lift-evidence'],
  ['GET', '/api/v1/lift-evidence/{id}'],
  ['GET', '/api/v1/campaigns/{id}/optimizations'],
  ['POST', '/api/v1/optimizations/{id}/reject'],
  ['POST', '/api/v1/optimizations/{id}/accept'],
  ['POST', '/api/v1/brand-lift-studies/{studyId}/artifacts'],
];

describe('measurement surface', () => {
  test.each(ROUTES)('%s %s needs a bearer token: 401 problem without one', async (method, path) => {
    const res = await api.fetch(path.replace(/\{\w+\}/, id), { method });
    expect(res.status).toBe(401);
    expect(res.headers.get('content-type')).toMatch(/problem\+json/);
  });

  test('every measurement route is in the OpenAPI document', async () => {
    const doc = await json<{ paths: Record<string, Record<string, unknown>> }>(await api.fetch('/api/v1/openapi.json'));
    for (const [method, path] of ROUTES) expect(doc.paths[path]?.[method.toLowerCase()]).toBeDefined();
  });

  test('an artifact body sent in chunks, without a length, is cut off at 2,800,300 bytes with a 413', async () => {
    const human = await env.issuer.token({ org: 'org-surface', user: 'researcher' });
    await env.db('workspaces').insert({ id: 'org-surface', name: 'org-surface', pixel_key: `px_${randomUUID()}` });
    const created = await post(api, human, '/api/v1/brand-lift-studies', { name: 'Chunked' });
    const { study } = await json<{ study: { id: string } }>(created);
    const url = new URL(`${api.url}/api/v1/brand-lift-studies/${study.id}/artifacts`);
    const status = await new Promise<number>((resolve, reject) => {
      const req = http.request(
        url,
        {
          method: 'POST',
          headers: { authorization: `Bearer ${human}`, 'content-type': 'application/json', 'idempotency-key': randomUUID() },
        },
        (res) => {
          res.resume();
          resolve(res.statusCode ?? 0);
        },
      );
      req.on('error', (err) => (String(err).includes('EPIPE') || String(err).includes('ECONNRESET') ? undefined : reject(err)));
      const chunk = Buffer.alloc(100_000, 0x20);
      for (let sent = 0; sent <= 2_800_300; sent += chunk.length) req.write(chunk);
      req.end();
    });
    expect(status).toBe(413);
    expect(await env.db('study_artifacts').where({ study_id: study.id })).toHaveLength(0);
  });
});
