import { fundWallet } from '../support/wallet';
import { createTestEnv, json, type TestApi, type TestEnv } from '../support/api';
import { draftCampaign, post } from '../support/bookings';
import { SAMPLE, makeCreative, upload } from '../support/creatives';

let env: TestEnv;
let api: TestApi;
beforeAll(async () => {
  env = await createTestEnv();
  api = await env.api({ RATE_LIMIT_MAX: '100000' });
});
afterAll(() => env.close());

test('paths are exact: a differently cased or slash-ended path is not the persona route (and cannot dodge its limit)', async () => {
  const token = await env.issuer.token();
  for (const path of ['/api/v1/Personas/Extract', '/api/v1/personas/extract/']) {
    const res = await post(api, token, path, { nlBrief: 'Women in Leeds' });
    expect(res.status).toBe(404);
  }
  expect((await post(api, token, '/api/v1/personas/extract', { nlBrief: 'x' })).headers.get('x-ratelimit-limit')).toBe('30');
});

test('text Postgres cannot store (a NUL character) is a 400, not a 500, and records nothing', async () => {
  const token = await env.issuer.token({ org: 'org-nul' });
  const { workspace } = await json<{ workspace: { pixelKey: string } }>(await api.fetch('/api/v1/auth/context', { token }));
  const res = await api.fetch(`/api/v1/t/${workspace.pixelKey}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: '{"kind":"a\\u0000b"}',
  });
  expect(res.status).toBe(400);
  expect(await json(res)).toMatchObject({ code: 'invalid_text' });
  expect(await env.db('pixel_events').where({ advertiser_id: 'org-nul' })).toHaveLength(0);
});

test('two workspaces uploading the same bytes each own their upload', async () => {
  const a = await env.issuer.token({ org: 'org-own-a' });
  const b = await env.issuer.token({ org: 'org-own-b' });
  const bytes = SAMPLE['video/mp4']();
  const ua = await upload(api, a, 'video/mp4', bytes);
  const ub = await upload(api, b, 'video/mp4', bytes);
  expect(ub.url).toBe(ua.url);
  for (const token of [a, b]) {
    expect(
      (await post(api, token, '/api/v1/creatives', { name: 'Same', channel: 'ctv', format: 'video', assetUrl: ua.url, copyText: 'x' }))
        .status,
    ).toBe(201);
  }
});

test('a malformed escape in assetUrl is a 404, not a 500', async () => {
  const token = await env.issuer.token({ org: 'org-esc' });
  const res = await post(api, token, '/api/v1/creatives', {
    name: 'x',
    channel: 'ctv',
    format: 'video',
    assetUrl: '/files/assets/%E0%A4%A',
    copyText: 'x',
  });
  expect(res.status).toBe(404);
});

test("a buyer session can reference the caller's own creative", async () => {
  const token = await env.issuer.token({ org: 'org-sess' });
  const c = await makeCreative(api, token, 'ctv');
  const res = await post(api, token, '/api/v1/buyer/sessions', { workflow: 'creative_direction', context: { creativeId: c.id } });
  expect(res.status).toBe(201);
  expect(await json(res)).toMatchObject({ session: { references: { creative: { id: c.id } } } });
});

describe('studies', () => {
  test('one quote cannot be funded twice, even by concurrent approvals', async () => {
    const token = await env.issuer.token({ org: 'org-fund' });
    await api.fetch('/api/v1/auth/context', { token });
    await fundWallet(env, 'org-fund', 10_000_000);
    const { study } = await json<{ study: { id: string } }>(await post(api, token, '/api/v1/brand-lift-studies', { name: 'Lift' }));
    const { quote } = await json<{ quote: { id: string; amountMinor: number } }>(
      await post(api, token, `/api/v1/brand-lift-studies/${study.id}/quotes`, { sampleSize: 500 }),
    );
    const results = await Promise.all(
      [1, 2, 3].map(() => post(api, token, `/api/v1/brand-lift-studies/${study.id}/approvals`, { quoteId: quote.id })),
    );
    expect(results.map((r) => r.status).sort()).toEqual([201, 409, 409]);
    expect((await env.db('wallets').where({ advertiser_id: 'org-fund' }).first()).reserved_minor).toBe(String(quote.amountMinor));
  });

  test("a study of a campaign outside the caller's product is hidden (404)", async () => {
    const full = await env.issuer.token({ org: 'org-scope' });
    const { campaignId } = await draftCampaign(api, full, [{ channel: 'ctv', adapterKey: 'sandbox-ctv', budgetMinor: 100 }]);
    const { study } = await json<{ study: { id: string } }>(
      await post(api, full, '/api/v1/brand-lift-studies', { name: 'Lift', campaignId }),
    );
    const doohOnly = await env.issuer.token({ org: 'org-scope', product: 'flightdeck-dooh' });
    expect((await api.fetch(`/api/v1/brand-lift-studies/${study.id}`, { token: doohOnly })).status).toBe(404);
    expect((await post(api, doohOnly, `/api/v1/brand-lift-studies/${study.id}/quotes`, { sampleSize: 500 })).status).toBe(404);
  });
});
