import { createTestEnv, type TestEnv } from '../support/api';

let env: TestEnv;
beforeAll(async () => {
  env = await createTestEnv({ rateLimits: 'default' });
});
afterAll(() => env.close());

const headersOf = (res: Response) => ({
  limit: res.headers.get('x-ratelimit-limit'),
  remaining: res.headers.get('x-ratelimit-remaining'),
  reset: res.headers.get('x-ratelimit-reset'),
  retryAfter: res.headers.get('retry-after'),
});

describe('rate limits', () => {
  test('the default limit counts down, then refuses with 429, retry-after and the headers', async () => {
    const api = await env.api({ RATE_LIMIT_MAX: '3', REDIS_PREFIX: `${env.prefix}:a` });
    const seen = [];
    for (let i = 0; i < 4; i++) seen.push(await api.fetch('/readyz'));
    expect(seen.slice(0, 3).map((r) => headersOf(r).remaining)).toEqual(['2', '1', '0']);
    const refused = seen[3]!;
    expect(refused.status).toBe(429);
    expect(refused.headers.get('content-type')).toMatch(/problem\+json/);
    const h = headersOf(refused);
    expect(h.limit).toBe('3');
    expect(h.remaining).toBe('0');
    expect(Number(h.reset)).toBeGreaterThanOrEqual(1);
    expect(Number(h.reset)).toBeLessThanOrEqual(60);
    expect(Number(h.retryAfter)).toBe(Number(h.reset));
    expect(await refused.json()).toMatchObject({ code: 'rate_limited', recovery: 'transient' });
  });

  test('persona extraction has its own limit of 30 per window', async () => {
    const api = await env.api({ REDIS_PREFIX: `${env.prefix}:b` });
    const res = await api.fetch('/api/v1/personas/extract', { method: 'POST' });
    expect(headersOf(res).limit).toBe('30');
    expect(headersOf(await api.fetch('/readyz')).limit).toBe('300');
  });

  test('concurrent requests across two API processes sharing Redis never exceed the limit', async () => {
    const overrides = { RATE_LIMIT_MAX: '20', REDIS_PREFIX: `${env.prefix}:c` };
    const [one, two] = [await env.api(overrides), await env.api(overrides)];
    const responses = await Promise.all(Array.from({ length: 60 }, (_, i) => (i % 2 ? one : two).fetch('/api/v1/nowhere')));
    const allowed = responses.filter((r) => r.status !== 429);
    expect(allowed).toHaveLength(20);
    const remaining = allowed.map((r) => Number(headersOf(r).remaining)).sort((a, b) => a - b);
    expect(remaining).toEqual(Array.from({ length: 20 }, (_, i) => i));
  });

  test('the window resets: after it passes, requests are allowed again', async () => {
    const api = await env.api({ RATE_LIMIT_MAX: '1', RATE_LIMIT_WINDOW_MS: '3000', REDIS_PREFIX: `${env.prefix}:d` });
    expect((await api.fetch('/api/v1/nowhere')).status).toBe(404);
    const limited = await api.fetch('/api/v1/nowhere');
    expect(limited.status).toBe(429);
    const retryAfterS = Number(limited.headers.get('retry-after'));
    expect(retryAfterS).toBeGreaterThan(0);
    expect(retryAfterS).toBeLessThanOrEqual(3);
    // Polled rather than slept: the window ends on Redis's clock, not this process's.
    let status = 429;
    for (const deadline = Date.now() + 15_000; status === 429 && Date.now() < deadline;) {
      await new Promise((r) => setTimeout(r, 250));
      status = (await api.fetch('/api/v1/nowhere')).status;
    }
    expect(status).toBe(404);
  });

  test('without trusted proxies, a forged X-Forwarded-For does not escape the limit', async () => {
    const api = await env.api({ RATE_LIMIT_MAX: '2', REDIS_PREFIX: `${env.prefix}:e`, TRUST_PROXY: 'false' });
    const statuses = [];
    for (let i = 0; i < 3; i++) statuses.push((await api.fetch('/readyz', { headers: { 'x-forwarded-for': `203.0.113.${i}` } })).status);
    expect(statuses[2]).toBe(429);
  });

  test('behind a trusted proxy, each client IP has its own window', async () => {
    const api = await env.api({ RATE_LIMIT_MAX: '2', REDIS_PREFIX: `${env.prefix}:f`, TRUST_PROXY: 'loopback' });
    const from = (ip: string) => api.fetch('/readyz', { headers: { 'x-forwarded-for': ip } });
    await from('198.51.100.1');
    await from('198.51.100.1');
    expect((await from('198.51.100.1')).status).toBe(429);
    const other = await from('198.51.100.2');
    expect(other.status).not.toBe(429);
    expect(headersOf(other).remaining).toBe('1');
  });

  test('when Redis is down, limited routes answer 503 rather than running unlimited, with retry-after and the configured limit', async () => {
    const api = await env.api({ RATE_LIMIT_MAX: '7' }, { redisUrl: 'redis://127.0.0.1:9' });
    const res = await api.fetch('/api/v1/auth/context', { token: await env.issuer.token() });
    expect(res.status).toBe(503);
    expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect(await res.json()).toMatchObject({ code: 'dependency_unavailable', recovery: 'transient' });
    const h = headersOf(res);
    expect(h.limit).toBe('7');
    expect(h.remaining).toBe('0');
    expect(h.retryAfter).toMatch(/^[1-9]\d*$/);
    expect(h.reset).toBe(h.retryAfter);
  });

  test('when Redis is down, /readyz still answers (503, not ready) and still carries the rate-limit headers', async () => {
    const api = await env.api({ RATE_LIMIT_MAX: '9' }, { redisUrl: 'redis://127.0.0.1:9' });
    const res = await api.fetch('/readyz');
    expect(res.status).toBe(503);
    const h = headersOf(res);
    expect(h.limit).toBe('9');
    expect(h.remaining).toBe('0');
    expect(h.reset).toMatch(/^[1-9]\d*$/);
  });
});
