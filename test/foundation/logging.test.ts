import { createTestEnv, type TestEnv } from '../support/api';

let env: TestEnv;
beforeAll(async () => {
  env = await createTestEnv();
});
afterAll(() => env.close());

describe('request logging', () => {
  test('each request is logged once with its id, route, status and latency, and never with the token', async () => {
    const api = await env.api();
    const token = await env.issuer.token({ user: 'logged-user' });
    await api.fetch('/api/v1/auth/context', { token, headers: { 'x-request-id': 'log-check-0001', cookie: 'session=secret-cookie' } });
    const line = api.logs.find((l) => (l.req as { id?: string } | undefined)?.id === 'log-check-0001' && l.res);
    expect(line).toMatchObject({
      requestId: 'log-check-0001',
      route: 'GET /api/v1/auth/context',
      res: { statusCode: 200 },
      req: { method: 'GET', path: '/api/v1/auth/context' },
    });
    expect(typeof line!.responseTime).toBe('number');
    expect(line).not.toHaveProperty('aborted');
    expect(api.logs.filter((l) => (l.req as { id?: string } | undefined)?.id === 'log-check-0001' && l.res)).toHaveLength(1);
    const all = api.rawLogs.join('\n');
    expect(all).not.toContain(token);
    expect(all).not.toContain(token.split('.')[2]!);
    expect(all).not.toContain('secret-cookie');
  });

  test('a refused token is not logged either', async () => {
    const api = await env.api();
    const bad = `${await env.issuer.token({ issuer: 'https://evil.example/' })}`;
    await api.fetch('/api/v1/auth/context', { token: bad });
    expect(api.rawLogs.join('\n')).not.toContain(bad.split('.')[1]!);
  });
});
