import { createTestEnv, type TestApi, type TestEnv } from '../support/api';

let env: TestEnv;
let api: TestApi;
beforeAll(async () => {
  env = await createTestEnv();
  api = await env.api();
});
afterAll(() => env.close());

describe('ids that only look like uuids', () => {
  test.each([
    '/api/v1/personas/',
    '/api/v1/buyer/sessions/',
    '/api/v1/campaigns/',
    '/api/v1/plans/',
    '/api/v1/bookings/',
    '/api/v1/creatives/',
    '/api/v1/agent/runs/',
    '/api/v1/identity/cohorts/',
    '/api/v1/brand-lift-studies/',
  ])('%s<36 dashes> is a 404, never a database error', async (path) => {
    const res = await api.fetch(`${path}${'-'.repeat(36)}`, { token: await env.issuer.token() });
    expect(res.status).toBe(404);
  });
});
