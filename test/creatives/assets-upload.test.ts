import { createHash } from 'node:crypto';
import { createTestEnv, json, type TestApi, type TestEnv } from '../support/api';
import { SAMPLE } from '../support/creatives';

let env: TestEnv;
let api: TestApi;
let human: string;
beforeAll(async () => {
  env = await createTestEnv();
  api = await env.api({ ASSET_MAX_BYTES: '4096' });
  human = await env.issuer.token({ org: 'org-assets', user: 'designer' });
});
afterAll(() => env.close());

const upload = (token: string, contentType: string | undefined, body: Buffer) =>
  api.fetch('/api/v1/assets', { method: 'POST', token, headers: contentType ? { 'content-type': contentType } : {}, body });
const count = async () => Number((await env.db('assets').count({ n: '*' }))[0]!.n);

describe('POST /api/v1/assets', () => {
  test('stores the bytes content-addressed and returns their URL and sha256 fingerprint, which serve the same bytes', async () => {
    const bytes = SAMPLE['image/png']();
    const res = await upload(human, 'image/png', bytes);
    expect(res.status).toBe(201);
    const { asset } = await json<{ asset: { url: string; fingerprint: string; sizeBytes: number; contentType: string } }>(res);
    const sha = createHash('sha256').update(bytes).digest('hex');
    expect(asset).toEqual({
      name: `${sha}.png`,
      url: `/files/assets/${sha}.png`,
      fingerprint: `sha256:${sha}`,
      contentType: 'image/png',
      sizeBytes: bytes.length,
    });
    expect(res.headers.get('location')).toBe(asset.url);
    const served = await api.fetch(asset.url);
    expect(Buffer.from(await served.arrayBuffer()).equals(bytes)).toBe(true);
  });

  test('a declared type that the bytes contradict is refused (400) and nothing is stored', async () => {
    const before = await count();
    const res = await upload(human, 'image/png', Buffer.from('<script>alert(1)</script>'));
    expect(res.status).toBe(400);
    expect(await json(res)).toMatchObject({ code: 'content_type_mismatch' });
    expect((await upload(human, 'video/mp4', SAMPLE['image/png']())).status).toBe(400);
    expect(await count()).toBe(before);
  });

  test('an unsupported or missing content type is refused (400)', async () => {
    expect(await json(await upload(human, 'text/html', Buffer.from('<html></html>')))).toMatchObject({ code: 'unsupported_media_type' });
    expect((await upload(human, undefined, SAMPLE['image/png']())).status).toBe(400);
  });

  test('an empty body is a 400 and a body over ASSET_MAX_BYTES is a 413', async () => {
    expect((await upload(human, 'image/png', Buffer.alloc(0))).status).toBe(400);
    const big = Buffer.concat([SAMPLE['image/png'](), Buffer.alloc(5000)]);
    const res = await upload(human, 'image/png', big);
    expect(res.status).toBe(413);
    expect(await json(res)).toMatchObject({ code: 'payload_too_large' });
  });

  test('a delegated agent cannot upload (403), and no token is a 401', async () => {
    const agent = await env.issuer.token({ org: 'org-assets', user: 'designer', agent: 'bot' });
    expect((await upload(agent, 'image/png', SAMPLE['image/png']())).status).toBe(403);
    const anonymous = await api.fetch('/api/v1/assets', {
      method: 'POST',
      headers: { 'content-type': 'image/png' },
      body: SAMPLE['image/png'](),
    });
    expect(anonymous.status).toBe(401);
  });

  test('upload logs never contain the bytes', async () => {
    const marker = Buffer.concat([SAMPLE['image/png'](), Buffer.from('UNIQUE-ASSET-MARKER-1234')]);
    await upload(human, 'image/png', marker);
    expect(api.rawLogs.join('\n')).not.toContain('UNIQUE-ASSET-MARKER-1234');
  });
});
