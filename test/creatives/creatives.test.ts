import { createTestEnv, json, type TestApi, type TestEnv } from '../support/api';
import { draftCampaign, post } from '../support/bookings';
import { MEDIA_FOR, makeCreative, upload, type CreativeBody } from '../support/creatives';

let env: TestEnv;
let api: TestApi;
let token: string;
beforeAll(async () => {
  env = await createTestEnv();
  api = await env.api({ RATE_LIMIT_MAX: '100000' });
  token = await env.issuer.token({ org: 'org-cr', user: 'designer' });
});
afterAll(() => env.close());

const count = async (table: string) => Number((await env.db(table).count({ n: '*' }))[0]!.n);
const base = async (channel = 'ctv') => ({
  name: 'Summer 30s',
  channel,
  format: 'video-30s',
  assetUrl: (await upload(api, token, MEDIA_FOR[channel]!)).url,
  copyText: 'Refreshingly simple.',
});
const audio = { tagline: 'Taste it', destinationUrl: 'https://acme.example/x', callToAction: 'Visit', language: 'en-GB' };

describe('POST /api/v1/creatives', () => {
  test('records the fingerprint of the exact stored bytes, version 1, and no review yet', async () => {
    const body = await base();
    const res = await post(api, token, '/api/v1/creatives', body);
    expect(res.status).toBe(201);
    const { creative } = await json<{ creative: CreativeBody }>(res);
    const asset = await env
      .db('assets')
      .where({ name: body.assetUrl.split('/').pop() })
      .first();
    expect(creative).toMatchObject({
      version: 1,
      assetUrl: body.assetUrl,
      assetFingerprint: `sha256:${asset.sha256}`,
      status: 'active',
      reviewState: 'not-submitted',
      approvals: [],
    });
  });

  test('an absolute asset URL on any host resolves to the same stored bytes', async () => {
    const body = await base();
    const { creative } = await json<{ creative: CreativeBody }>(
      await post(api, token, '/api/v1/creatives', { ...body, assetUrl: `https://cdn.example.com${body.assetUrl}` }),
    );
    expect(creative.assetUrl).toBe(body.assetUrl);
  });

  test('audio creatives need audioDelivery; other channels refuse it', async () => {
    expect((await post(api, token, '/api/v1/creatives', { ...(await base('audio')), format: 'audio-30s' })).status).toBe(400);
    expect(
      (await post(api, token, '/api/v1/creatives', { ...(await base('audio')), format: 'audio-30s', audioDelivery: audio })).status,
    ).toBe(201);
    expect((await post(api, token, '/api/v1/creatives', { ...(await base()), audioDelivery: audio })).status).toBe(400);
  });

  test.each([
    ['an unknown field', { extra: 1 }],
    ['an empty name', { name: '' }],
    ['an unknown channel', { channel: 'radio' }],
    ['an empty format', { format: '' }],
    ['an empty copyText', { copyText: '' }],
    ['an empty assetUrl', { assetUrl: '' }],
    ['a tagline of one character', { channel: 'audio', audioDelivery: { ...audio, tagline: 'x' } }],
    ['a tagline over 40 characters', { channel: 'audio', audioDelivery: { ...audio, tagline: 'x'.repeat(41) } }],
    ['a destinationUrl that is not a URI', { channel: 'audio', audioDelivery: { ...audio, destinationUrl: 'nope' } }],
    ['a callToAction over 80 characters', { channel: 'audio', audioDelivery: { ...audio, callToAction: 'x'.repeat(81) } }],
    ['a language of one character', { channel: 'audio', audioDelivery: { ...audio, language: 'e' } }],
    ['an unknown audioDelivery field', { channel: 'audio', audioDelivery: { ...audio, voice: 'deep' } }],
  ])('%s is a 400 and creates nothing', async (_n, over) => {
    const before = await count('creatives');
    const body = { ...(await base((over as { channel?: string }).channel === 'audio' ? 'audio' : 'ctv')), ...over };
    expect((await post(api, token, '/api/v1/creatives', body)).status).toBe(400);
    expect(await count('creatives')).toBe(before);
  });

  test('an asset that is not stored here is 422; another tenant asset, or campaign, is 404; nothing is created', async () => {
    const before = await count('creatives');
    expect(
      await json(await post(api, token, '/api/v1/creatives', { ...(await base()), assetUrl: 'https://elsewhere.example/spot.mp4' })),
    ).toMatchObject({ code: 'asset_not_stored' });
    const other = await env.issuer.token({ org: 'org-cr-other', user: 'x' });
    const theirs = await upload(api, other, 'video/mp4');
    expect((await post(api, token, '/api/v1/creatives', { ...(await base()), assetUrl: theirs.url })).status).toBe(404);
    const { campaignId } = await draftCampaign(api, other, [{ channel: 'ctv', adapterKey: 'sandbox-ctv', budgetMinor: 100 }]);
    expect((await post(api, token, '/api/v1/creatives', { ...(await base()), campaignId })).status).toBe(404);
    expect(await count('creatives')).toBe(before);
  });

  test('a channel outside the product is 403; media unsuited to the channel is 422', async () => {
    const doohOnly = await env.issuer.token({ org: 'org-cr', user: 'designer', product: 'flightdeck-dooh' });
    expect((await post(api, doohOnly, '/api/v1/creatives', await base())).status).toBe(403);
    const png = await upload(api, token, 'image/png');
    expect(await json(await post(api, token, '/api/v1/creatives', { ...(await base()), assetUrl: png.url }))).toMatchObject({
      code: 'asset_unsuitable',
    });
  });
});

describe('revisions', () => {
  test('each revision is a new version with its own metadata; earlier versions stay readable', async () => {
    const c = await makeCreative(api, token, 'ctv');
    const r1 = await post(api, token, `/api/v1/creatives/${c.id}/revise`, { headline: 'Summer is here', mandatories: ['18+ only'] });
    expect(r1.status).toBe(200);
    const v2 = (await json<{ creative: CreativeBody & { delivery: Record<string, unknown> } }>(r1)).creative;
    expect(v2).toMatchObject({
      version: 2,
      delivery: { headline: 'Summer is here', mandatories: ['18+ only'] },
      assetFingerprint: c.assetFingerprint,
    });
    expect(v2.metadataDigest).not.toBe(c.metadataDigest);
    const v3 = (
      await json<{ creative: CreativeBody & { delivery: Record<string, unknown> } }>(
        await post(api, token, `/api/v1/creatives/${c.id}/revise`, { cta: 'Buy now' }),
      )
    ).creative;
    expect(v3.delivery).toEqual({ headline: 'Summer is here', mandatories: ['18+ only'], cta: 'Buy now' });
    const read = await json<{ creative: { versions: Array<{ version: number; delivery: unknown }> } }>(
      await api.fetch(`/api/v1/creatives/${c.id}`, { token }),
    );
    expect(read.creative.versions.map((v) => v.version)).toEqual([1, 2, 3]);
    expect(read.creative.versions[0]!.delivery).toEqual({});
  });

  test.each([
    ['an empty body', {}],
    ['a headline over 200 characters', { headline: 'x'.repeat(201) }],
    ['a subline over 300 characters', { subline: 'x'.repeat(301) }],
    ['an empty cta', { cta: '' }],
    ['five mandatories', { mandatories: ['a', 'b', 'c', 'd', 'e'] }],
    ['a mandatory over 60 characters', { mandatories: ['x'.repeat(61)] }],
    ['an unknown field', { copyText: 'new' }],
  ])('%s is a 400 and makes no version', async (_n, body) => {
    const c = await makeCreative(api, token, 'ctv');
    expect((await post(api, token, `/api/v1/creatives/${c.id}/revise`, body)).status).toBe(400);
    expect(await env.db('creative_versions').where({ creative_id: c.id })).toHaveLength(1);
  });

  test("another tenant's creative is 404 on every route", async () => {
    const c = await makeCreative(api, token, 'ctv');
    const other = await env.issuer.token({ org: 'org-cr-3' });
    expect((await api.fetch(`/api/v1/creatives/${c.id}`, { token: other })).status).toBe(404);
    expect((await post(api, other, `/api/v1/creatives/${c.id}/revise`, { cta: 'x' })).status).toBe(404);
    expect((await post(api, other, `/api/v1/creatives/${c.id}/destination`, { destinationUrl: 'https://x.example/' })).status).toBe(404);
    expect((await post(api, other, `/api/v1/creatives/${c.id}/submit`, { adapterKey: 'sandbox-ctv' })).status).toBe(404);
    expect((await api.fetch('/api/v1/creatives/not-a-uuid', { token })).status).toBe(404);
  });
});

describe('a destination (POST /api/v1/creatives/{id}/destination)', () => {
  const destination = (id: string, body: unknown, as = token) => post(api, as, `/api/v1/creatives/${id}/destination`, body);

  test('any creative may have one: a new version whose metadata digest covers it, its earlier words kept', async () => {
    const c = await makeCreative(api, token, 'dooh');
    await post(api, token, `/api/v1/creatives/${c.id}/revise`, { headline: 'Summer is here' });
    const res = await destination(c.id, { destinationUrl: 'https://acme.example/summer?utm_source=dooh' });
    expect(res.status).toBe(200);
    const v3 = (await json<{ creative: CreativeBody & { delivery: Record<string, unknown> } }>(res)).creative;
    expect(v3).toMatchObject({
      version: 3,
      delivery: { headline: 'Summer is here', destinationUrl: 'https://acme.example/summer?utm_source=dooh' },
      assetFingerprint: c.assetFingerprint,
    });
    const read = await json<{ creative: { versions: Array<{ metadataDigest: string }> } }>(
      await api.fetch(`/api/v1/creatives/${c.id}`, { token }),
    );
    expect(new Set(read.creative.versions.map((v) => v.metadataDigest)).size).toBe(3);
  });

  test.each([
    ['no URL', {}],
    ['not a URL', { destinationUrl: 'acme.example' }],
    ['a script URL', { destinationUrl: 'javascript:alert(1)' }],
    ['an ftp URL', { destinationUrl: 'ftp://acme.example/x' }],
    ['a URL over 2048 characters', { destinationUrl: `https://acme.example/${'x'.repeat(2030)}` }],
    ['an unknown field', { destinationUrl: 'https://acme.example/', headline: 'x' }],
  ])('%s is a 400 and makes no version', async (_n, body) => {
    const c = await makeCreative(api, token, 'ctv');
    const res = await destination(c.id, body);
    expect(res.status).toBe(400);
    expect((await json<{ code: string }>(res)).code).toBe('validation_failed');
    expect(await env.db('creative_versions').where({ creative_id: c.id })).toHaveLength(1);
  });

  test('an unknown creative is 404', async () => {
    expect((await destination(crypto.randomUUID(), { destinationUrl: 'https://acme.example/' })).status).toBe(404);
  });
});
