import { createTestEnv, json, type TestApi, type TestEnv } from '../support/api';
import { draftCampaign, post } from '../support/bookings';
import { MEDIA_FOR, upload } from '../support/creatives';
import { creativeBody } from '../support/creative-samples';

let env: TestEnv;
let api: TestApi;
let token: string;
beforeAll(async () => {
  env = await createTestEnv();
  api = await env.api();
  token = await env.issuer.token({ org: 'org-errors', user: 'buyer' });
});
afterAll(() => env.close());

type Problem = { code: string; recovery: string; errors?: Array<{ path: string; code?: string }> };

describe('errors a caller can fix say so, all at once', () => {
  test('a known path asked with a method it does not take is 405 with Allow; an unknown path is still 404', async () => {
    const { campaignId } = await draftCampaign(api, token, [{ channel: 'ctv', adapterKey: 'sandbox-ctv', budgetMinor: 1_000 }]);
    for (const [method, path, allow] of [
      ['DELETE', '/api/v1/campaigns', 'GET, HEAD, POST'],
      ['PUT', `/api/v1/campaigns/${campaignId}/launch`, 'POST'],
      ['POST', `/api/v1/campaigns/${campaignId}`, 'GET, HEAD'],
    ] as const) {
      const res = await api.fetch(path, { method, token });
      expect([method, path, res.status, res.headers.get('allow')]).toEqual([method, path, 405, allow]);
      expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
      expect(await json<Problem>(res)).toMatchObject({ code: 'method_not_allowed', recovery: 'correctable' });
    }
    expect((await api.fetch('/api/v1/no-such-thing', { method: 'DELETE', token })).status).toBe(404);
  });

  test('every validation issue of the query and the body comes in one 400, and nothing changes', async () => {
    const { campaignId } = await draftCampaign(api, token, [{ channel: 'ctv', adapterKey: 'sandbox-ctv', budgetMinor: 1_000 }]);
    const before = await env.db('plans').where({ campaign_id: campaignId }).first();
    const res = await api.fetch(`/api/v1/campaigns/${campaignId}/plan?stray=1`, {
      method: 'PUT',
      token,
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ lines: [], bogus: true }),
    });
    expect(res.status).toBe(400);
    const paths = ((await json<Problem>(res)).errors ?? []).map((e) => e.path.split('.')[0]);
    expect(new Set(paths)).toEqual(new Set(['query', 'body']));
    expect(await env.db('plans').where({ campaign_id: campaignId }).first()).toEqual(before);
  });

  test("a plan's issues on every line come together, not one at a time", async () => {
    const plan = await draftCampaign(api, token, [{ channel: 'ctv', adapterKey: 'sandbox-ctv', budgetMinor: 1_000 }]);
    const res = await post(
      api,
      token,
      `/api/v1/campaigns/${plan.campaignId}/plan`,
      {
        expectedVersion: plan.planVersion,
        lines: [
          { channel: 'tv', adapterKey: 'sandbox-tv', budgetMinor: 500 },
          { channel: 'ctv', adapterKey: 'nobody', budgetMinor: 900 },
        ],
      },
      'PUT',
    );
    expect(res.status).toBe(400);
    const problem = await json<Problem>(res);
    expect(problem).toMatchObject({ code: 'validation_failed', recovery: 'correctable' });
    expect((problem.errors ?? []).map((e) => [e.path, e.code])).toEqual([
      ['body.lines.0.channel', 'channel_not_in_campaign'],
      ['body.lines.1.adapterKey', 'unknown_adapter'],
      ['body.lines', 'plan_over_budget'],
    ]);
  });

  test('asset_not_stored, asset_unsuitable and adapter_channel_unsupported are correctable', async () => {
    const plan = await draftCampaign(api, token, [{ channel: 'ctv', adapterKey: 'sandbox-ctv', budgetMinor: 1_000 }]);
    const wrongAdapter = await post(
      api,
      token,
      `/api/v1/campaigns/${plan.campaignId}/plan`,
      { expectedVersion: plan.planVersion, lines: [{ channel: 'ctv', adapterKey: 'sandbox-dooh', budgetMinor: 1_000 }] },
      'PUT',
    );
    expect(await json<Problem>(wrongAdapter)).toMatchObject({ code: 'adapter_channel_unsupported', recovery: 'correctable' });

    const notStored = await post(api, token, '/api/v1/creatives', creativeBody('ctv', 'https://elsewhere.example/video.mp4'));
    expect(await json<Problem>(notStored)).toMatchObject({ code: 'asset_not_stored', recovery: 'correctable' });

    const audio = await upload(api, token, MEDIA_FOR.audio!);
    const unsuitable = await post(api, token, '/api/v1/creatives', creativeBody('dooh', audio.url));
    expect(await json<Problem>(unsuitable)).toMatchObject({ code: 'asset_unsuitable', recovery: 'correctable' });
  });
});
