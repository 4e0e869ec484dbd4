import { createTestEnv, json, type TestApi, type TestEnv } from '../support/api';
import { launchPlan } from '../support/bookings';

let env: TestEnv;
let api: TestApi;
beforeAll(async () => {
  env = await createTestEnv();
  api = await env.api();
});
afterAll(() => env.close());

describe('advertiser views of bookings', () => {
  test("a campaign's bookings are listed with their lines and events", async () => {
    const { campaignId, booking, token } = await launchPlan(
      env,
      api,
      [{ channel: 'ctv', adapterKey: 'manual', budgetMinor: 1_000 }],
      'org-views',
    );
    const res = await api.fetch(`/api/v1/campaigns/${campaignId}/bookings`, { token });
    expect(res.status).toBe(200);
    const { bookings } = await json<{ bookings: Array<{ id: string; lines: unknown[]; events: unknown[] }> }>(res);
    expect(bookings.map((b) => b.id)).toEqual([booking.id]);
    expect(bookings[0]!.lines).toHaveLength(1);
    expect(bookings[0]!.events.length).toBeGreaterThanOrEqual(2);
  });

  test('another tenant, an out-of-product caller and a missing id all get the same 404', async () => {
    const { campaignId, booking } = await launchPlan(
      env,
      api,
      [{ channel: 'tv', adapterKey: 'manual', budgetMinor: 1_000 }],
      'org-private',
    );
    const strip = (b: Record<string, unknown>) => ({ ...b, requestId: undefined });
    const owner = await env.issuer.token({ org: 'org-private' });
    const missing = strip(await json(await api.fetch('/api/v1/bookings/00000000-0000-4000-8000-000000000000', { token: owner })));
    for (const token of [
      await env.issuer.token({ org: 'org-other' }),
      await env.issuer.token({ org: 'org-private', product: 'flightdeck-ctv' }),
    ]) {
      for (const path of [`/api/v1/bookings/${booking.id}`, `/api/v1/campaigns/${campaignId}/bookings`]) {
        const res = await api.fetch(path, { token });
        expect(res.status).toBe(404);
        expect(strip(await json(res))).toEqual(missing);
      }
    }
    expect((await api.fetch('/api/v1/bookings/not-a-uuid', { token: owner })).status).toBe(404);
    expect((await api.fetch(`/api/v1/bookings/${booking.id}?expand=lines`, { token: owner })).status).toBe(400);
  });
});
