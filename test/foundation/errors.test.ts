import { createTestEnv, json, type TestApi, type TestEnv } from '../support/api';

let env: TestEnv;
let api: TestApi;
let pixelKey: string;

beforeAll(async () => {
  env = await createTestEnv();
  api = await env.api();
  const ctx = await json<{ workspace: { pixelKey: string } }>(await api.fetch('/api/v1/auth/context', { token: await env.issuer.token() }));
  pixelKey = ctx.workspace.pixelKey;
});
afterAll(() => env.close());

const PROBLEM_KEYS = ['code', 'detail', 'recovery', 'requestId', 'status', 'title', 'type'];

describe('problem+json errors', () => {
  test('an unknown route is a 404 problem with every documented field, the request id and rate-limit headers', async () => {
    const res = await api.fetch('/api/v1/no-such-thing', { headers: { 'x-request-id': 'trace-0001-abc' } });
    expect(res.status).toBe(404);
    expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect(res.headers.get('x-request-id')).toBe('trace-0001-abc');
    expect(res.headers.get('x-ratelimit-remaining')).toMatch(/^\d+$/);
    const body = await json(res);
    expect(Object.keys(body).sort()).toEqual(PROBLEM_KEYS);
    expect(body).toMatchObject({ status: 404, code: 'not_found', recovery: 'terminal', requestId: 'trace-0001-abc' });
  });

  test('a request id that is not sane is replaced with a fresh one', async () => {
    const res = await api.fetch('/readyz', { headers: { 'x-request-id': 'bad id\twith spaces' } });
    expect(res.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
  });

  test('malformed JSON is a 400 malformed_json and records nothing', async () => {
    const res = await api.fetch(`/api/v1/t/${pixelKey}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"kind": ',
    });
    expect(res.status).toBe(400);
    expect(await json(res)).toMatchObject({ code: 'malformed_json', recovery: 'correctable' });
    expect(await env.db('pixel_events').count({ n: '*' })).toEqual([{ n: '0' }]);
  });

  test('an oversized body is a 413 and records nothing', async () => {
    const res = await api.fetch('/api/v1/t/' + pixelKey, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ kind: 'pv', padding: 'x'.repeat(20_000) }),
    });
    expect(res.status).toBe(413);
    expect(await json(res)).toMatchObject({ code: 'payload_too_large' });
    expect(await env.db('pixel_events').count({ n: '*' })).toEqual([{ n: '0' }]);
  });

  test('a body in a content type the operation does not read is refused and records nothing', async () => {
    const res = await api.fetch(`/api/v1/t/${pixelKey}`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: 'kind=pv',
    });
    expect(res.status).toBe(400);
    expect(await json(res)).toMatchObject({ code: 'unsupported_media_type' });
    expect(await env.db('pixel_events').count({ n: '*' })).toEqual([{ n: '0' }]);
  });

  test.each([
    ['arrays', '['.repeat(100_000) + ']'.repeat(100_000)],
    ['objects', '{"a":'.repeat(100_000) + '1' + '}'.repeat(100_000)],
  ])('a body of %s nested 100,000 levels deep is a 400 body_too_deep and creates nothing', async (_kind, body) => {
    const token = await env.issuer.token({ org: 'org-deep' });
    const res = await api.fetch('/api/v1/campaigns', { method: 'POST', token, headers: { 'content-type': 'application/json' }, body });
    expect(res.status).toBe(400);
    expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect(await json(res)).toMatchObject({ code: 'body_too_deep', recovery: 'correctable' });
    expect(await env.db('campaigns').where({ advertiser_id: 'org-deep' })).toHaveLength(0);
  });

  test('a thrown error is a 500 that leaks no internals, and the cause is logged with the request id', async () => {
    const token = await env.issuer.token();
    const broken = await env.database.db.schema.renameTable('campaigns', 'campaigns_away').then(() => true);
    expect(broken).toBe(true);
    try {
      const res = await api.fetch('/api/v1/campaigns', { token, headers: { 'x-request-id': 'trace-500-check' } });
      expect(res.status).toBe(500);
      const text = await res.text();
      expect(JSON.parse(text)).toMatchObject({ code: 'internal_error', status: 500, requestId: 'trace-500-check' });
      expect(text).not.toMatch(/campaigns|relation|select|insert|stack|at /i);
      const logged = api.logs.find(
        (l) => l.level === 50 && (l.requestId === 'trace-500-check' || (l.req as { id?: string })?.id === 'trace-500-check'),
      );
      expect(JSON.stringify(logged)).toMatch(/campaigns/);
    } finally {
      await env.database.db.schema.renameTable('campaigns_away', 'campaigns');
    }
  });
});

describe('requests broken below the API', () => {
  const campaigns = async () => Number((await env.db('campaigns').count({ n: '*' }))[0]!.n);

  test.each(['%ED%A0%80', '%FF', '%zz', '%'])(
    'a path id that is not valid percent-encoding (%s) is a 400 problem, not a 500',
    async (bad) => {
      const token = await env.issuer.token();
      const res = await api.fetch(`/api/v1/plans/${bad}`, { token });
      expect(res.status).toBe(400);
      expect(await json(res)).toMatchObject({ status: 400, code: 'malformed_path', recovery: 'correctable' });
    },
  );

  test.each(['gzip', 'deflate', 'br'])(
    'a JSON body that is not the %s it claims is a 400 problem and creates nothing',
    async (encoding) => {
      const token = await env.issuer.token();
      const before = await campaigns();
      const res = await api.fetch('/api/v1/campaigns', {
        method: 'POST',
        token,
        headers: { 'content-type': 'application/json', 'content-encoding': encoding },
        body: JSON.stringify({ name: 'x' }),
      });
      expect(res.status).toBe(400);
      expect(await json(res)).toMatchObject({ code: 'malformed_body_encoding' });
      expect(await campaigns()).toBe(before);
    },
  );

  test('a request head over 16 KiB is a 431 problem with a request id, not a bare status line', async () => {
    const res = await api.fetch(`/readyz?pad=${'x'.repeat(20_000)}`);
    expect(res.status).toBe(431);
    expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect(res.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
    expect(await json(res)).toMatchObject({ status: 431, code: 'request_header_too_large', recovery: 'correctable' });
  });
});
