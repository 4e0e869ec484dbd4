import http from 'node:http';
import { createTestEnv, type TestApi, type TestEnv } from '../support/api';
import { createHash } from 'node:crypto';

let env: TestEnv;
let api: TestApi;
const png = Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), Buffer.from('fake image body for tests')]);
let stored: { name: string; url: string; fingerprint: string };

beforeAll(async () => {
  env = await createTestEnv({ rateLimits: 'default' });
  api = await env.api();
  stored = await api.deps.assets.put(png, 'image/png', { advertiserId: undefined });
});
afterAll(() => env.close());

/** A raw request, so the path reaches the server exactly as written (fetch would normalise "../"). */
function rawGet(path: string): Promise<{ status: number; body: string }> {
  const url = new URL(api.url);
  return new Promise((resolve, reject) => {
    const req = http.request({ host: url.hostname, port: url.port, path, method: 'GET' }, (res) => {
      let body = '';
      res.on('data', (c) => (body += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

describe('GET /files/assets/{name}', () => {
  test('serves the stored bytes with their content type, a strong ETag and immutable caching', async () => {
    const sha = createHash('sha256').update(png).digest('hex');
    expect(stored.fingerprint).toBe(`sha256:${sha}`);
    expect(stored.url).toBe(`/files/assets/${sha}.png`);
    const res = await api.fetch(stored.url);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('image/png');
    expect(res.headers.get('etag')).toBe(`"sha256-${sha}"`);
    expect(res.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
    expect(res.headers.get('x-content-type-options')).toBe('nosniff');
    expect(res.headers.get('x-ratelimit-limit')).toBe('300');
    expect(Buffer.from(await res.arrayBuffer()).equals(png)).toBe(true);
  });

  test('a matching If-None-Match gets 304 with no body', async () => {
    const first = await api.fetch(stored.url);
    const res = await api.fetch(stored.url, { headers: { 'if-none-match': first.headers.get('etag')! } });
    expect(res.status).toBe(304);
    expect(await res.text()).toBe('');
  });

  test('an unknown name is a 404 problem', async () => {
    const res = await api.fetch(`/files/assets/${'0'.repeat(64)}.png`);
    expect(res.status).toBe(404);
    expect(await res.json()).toMatchObject({ code: 'not_found' });
  });

  test.each([
    '/files/assets/..%2F..%2Fpackage.json',
    '/files/assets/%2e%2e%2f%2e%2e%2fpackage.json',
    '/files/assets/..%5c..%5cpackage.json',
    '/files/assets/../../package.json',
    '/files/assets/%2Fetc%2Fpasswd',
    `/files/assets/..%2F${'a'.repeat(64)}.png`,
  ])('a traversal attempt (%s) never reaches the disk', async (path) => {
    const res = await rawGet(path);
    expect(res.status).toBe(404);
    expect(res.body).not.toMatch(/"name": "flightdeck"|root:x:0/);
  });

  test('the same bytes stored twice keep one name and one row', async () => {
    const again = await api.deps.assets.put(Buffer.from(png), 'image/png');
    expect(again.name).toBe(stored.name);
    expect(await env.db('assets').where({ name: stored.name }).count({ n: '*' })).toEqual([{ n: '1' }]);
  });
});
