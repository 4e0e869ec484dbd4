import { createTestEnv, json, type TestApi, type TestEnv } from '../support/api';
import { post } from '../support/bookings';

let env: TestEnv;
let api: TestApi;
beforeAll(async () => {
  env = await createTestEnv();
  api = await env.api();
});
afterAll(() => env.close());

describe('the staff surface to a customer', () => {
  test('answers 404 before looking at the request, so a malformed request reveals nothing either', async () => {
    const customer = await env.issuer.token({ org: 'org-a', user: 'customer' });
    const missing = await json(await api.fetch('/api/v1/no-such-route', { token: customer }));
    const strip = (b: Record<string, unknown>) => ({ ...b, requestId: undefined });
    const attempts = [
      api.fetch('/api/v1/internal/fulfilment/bookings?limit=9999&bogus=1', { token: customer }),
      post(api, customer, '/api/v1/internal/fulfilment/bookings/x/lines/y/uncertain', { nonsense: true }),
      post(api, customer, '/api/v1/internal/fulfilment/bookings/x/lines/y/claim', 'not json at all'),
      post(api, customer, '/api/v1/internal/fulfilment/clients/a/campaigns/b/browser-jobs', { readOnlyConfirmed: false }),
    ];
    for (const res of await Promise.all(attempts)) {
      expect(res.status).toBe(404);
      expect(strip(await json(res))).toEqual(strip(missing));
    }
  });
});
