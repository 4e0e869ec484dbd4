import type { Express } from 'express';
import { createTestEnv, json, type TestApi, type TestEnv } from '../support/api';
import { buildApp } from '../../api/app';

let env: TestEnv;
let api: TestApi;
beforeAll(async () => {
  env = await createTestEnv();
  api = await env.api();
});
afterAll(() => env.close());

interface Doc {
  openapi: string;
  paths: Record<
    string,
    Record<
      string,
      {
        parameters?: Array<{ name: string; in: string; schema: Record<string, unknown> }>;
        requestBody?: unknown;
        responses: Record<string, unknown>;
      }
    >
  >;
}

/** Every method+path express will actually answer, read from its router, not from our route list. */
function mountedRoutes(app: Express): string[] {
  const stack = (app as unknown as { router: { stack: Array<{ route?: { path: string; methods: Record<string, boolean> } }> } }).router
    .stack;
  return stack
    .filter((l) => l.route)
    .flatMap((l) => Object.keys(l.route!.methods).map((m) => `${m} ${l.route!.path.replace(/:([A-Za-z0-9_]+)/g, '{$1}')}`))
    .filter((r) => !r.startsWith('options ')); // CORS preflight, not an operation
}

describe('GET /api/v1/openapi.json', () => {
  test('is an OpenAPI 3.1 document covering every route the app serves', async () => {
    const res = await api.fetch('/api/v1/openapi.json');
    expect(res.status).toBe(200);
    const doc = await json<Doc>(res);
    expect(doc.openapi).toBe('3.1.0');
    const documented = Object.entries(doc.paths).flatMap(([p, ops]) => Object.keys(ops).map((m) => `${m} ${p}`));
    expect(documented.sort()).toEqual(mountedRoutes(buildApp(api.deps)).sort());
  });

  test('schemas come from the validators: the pixel bounds appear as the spec gives them', async () => {
    const doc = await json<Doc>(await api.fetch('/api/v1/openapi.json'));
    const op = doc.paths['/api/v1/t/{pixelKey}']!.post!;
    expect(op.parameters).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ name: 'pixelKey', in: 'path', schema: expect.objectContaining({ minLength: 1, maxLength: 128 }) }),
      ]),
    );
    const text = JSON.stringify(op.requestBody);
    expect(text).toContain('"maximum":21474836.47');
    expect(text).toContain('"maximum":2147483647');
    expect(Object.keys(op.responses)).toEqual(expect.arrayContaining(['202', '400', '404', '429']));
  });

  test('bearer operations declare the security scheme and their 401', async () => {
    const doc = await json<Doc>(await api.fetch('/api/v1/openapi.json'));
    const op = doc.paths['/api/v1/auth/context']!.get! as unknown as { security: unknown; responses: Record<string, unknown> };
    expect(op.security).toEqual([{ bearer: [] }]);
    expect(Object.keys(op.responses)).toContain('401');
  });
});
