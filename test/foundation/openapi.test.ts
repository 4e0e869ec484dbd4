import type { Express } from 'express';
import { compileErrors, validate } from '@readme/openapi-parser';
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

  test('validates as OpenAPI 3.1', async () => {
    const doc = await json<Doc>(await api.fetch('/api/v1/openapi.json'));
    const result = await validate(structuredClone(doc) as never);
    expect(result.valid ? [] : compileErrors(result)).toEqual([]);
    expect(result.valid).toBe(true);
  });

  test('every success status of every operation has a response schema (a 304 has no body), and every error is problem+json', async () => {
    const doc = await json<Doc>(await api.fetch('/api/v1/openapi.json'));
    const missing: string[] = [];
    const notProblem: string[] = [];
    for (const [path, ops] of Object.entries(doc.paths)) {
      for (const [method, op] of Object.entries(ops)) {
        for (const [status, response] of Object.entries(
          op.responses as Record<string, { content?: Record<string, { schema?: unknown }> }>,
        )) {
          const code = Number(status);
          const types = Object.keys(response.content ?? {});
          if (code < 400 && code !== 304 && !types.some((t) => response.content![t]!.schema)) missing.push(`${method} ${path} ${status}`);
          if (code >= 400 && !types.includes('application/problem+json')) notProblem.push(`${method} ${path} ${status}`);
        }
      }
    }
    expect(missing).toEqual([]);
    expect(notProblem).toEqual([]);
  });

  test('each operation carries its completeness marker, idempotency policy and, when public, no security', async () => {
    const doc = await json<Doc>(await api.fetch('/api/v1/openapi.json'));
    const ops = Object.entries(doc.paths).flatMap(([p, o]) =>
      Object.entries(o).map(([m, op]) => ({ key: `${m} ${p}`, op: op as unknown as Record<string, unknown> })),
    );
    for (const { op } of ops) {
      expect(['modeled', 'envelope-only', 'unmodeled']).toContain(op['x-response-completeness']);
      expect(['required', 'governed-execution-receipt', 'optional', 'not-generalized']).toContain(op['x-idempotency-policy']);
    }
    const byKey = Object.fromEntries(ops.map((o) => [o.key, o.op]));
    for (const key of ['post /api/v1/t/{pixelKey}', 'get /readyz', 'get /files/assets/{name}']) expect(byKey[key]!.security).toEqual([]);
    expect(byKey['get /api/v1/auth/context']!.security).toEqual([{ bearer: [] }]);
    expect(byKey['post /api/v1/t/{pixelKey}']!['x-idempotency-policy']).toBe('optional');
    expect(byKey['post /api/v1/brand-lift-studies/{studyId}/artifacts']!['x-idempotency-policy']).toBe('required');
    expect(byKey['post /api/v1/campaigns/{id}/launch']!['x-idempotency-policy']).toBe('governed-execution-receipt');
    expect(byKey['get /api/v1/plans/{id}']!['x-idempotency-policy']).toBe('not-generalized');
  });

  test('request headers: Idempotency-Key (uuid) where required, the agent step id and digest on governed actions', async () => {
    const doc = await json<Doc>(await api.fetch('/api/v1/openapi.json'));
    const draft = doc.paths['/api/v1/brand-lift-studies/{studyId}/draft']!.post!;
    const headers = Object.fromEntries((draft.parameters ?? []).filter((p) => p.in === 'header').map((p) => [p.name, p]));
    expect(headers['idempotency-key']).toMatchObject({ required: true, schema: { format: 'uuid' } });
    expect(headers['x-flightdeck-agent-step-id']).toMatchObject({ schema: { minLength: 1 } });
    expect(headers['x-flightdeck-agent-action-digest']).toMatchObject({ schema: { pattern: '^[a-f0-9]{64}$' } });
    const launch = doc.paths['/api/v1/campaigns/{id}/launch']!.post!;
    expect((launch.parameters ?? []).map((p) => p.name)).toEqual(expect.arrayContaining(['x-flightdeck-agent-step-id']));
  });

  test('responses carry the rate-limit headers, a 429 retry-after, and date-times and uuids have their formats', async () => {
    const doc = await json<Doc>(await api.fetch('/api/v1/openapi.json'));
    const responses = doc.paths['/api/v1/buyer/sessions']!.post!.responses as Record<string, { headers: Record<string, unknown> }>;
    for (const status of ['201', '400', '401', '429', '503']) {
      expect(Object.keys(responses[status]!.headers)).toEqual(
        expect.arrayContaining(['x-ratelimit-limit', 'x-ratelimit-remaining', 'x-ratelimit-reset']),
      );
    }
    expect(Object.keys(responses['429']!.headers)).toContain('retry-after');
    const text = JSON.stringify(doc);
    expect(text).toContain('"format":"date-time"');
    const session = (doc as unknown as { components: { schemas: Record<string, { properties: Record<string, unknown> }> } }).components
      .schemas.BuyerSession!;
    expect(session.properties.id).toMatchObject({ format: 'uuid' });
    expect(session.properties.createdAt).toMatchObject({ format: 'date-time' });
  });

  test('body-size refusals are documented per operation: a 413, and the artifact upload limit is 2,800,300 bytes', async () => {
    const doc = await json<Doc>(await api.fetch('/api/v1/openapi.json'));
    for (const [path, ops] of Object.entries(doc.paths)) {
      for (const [method, op] of Object.entries(ops)) {
        if (op.requestBody)
          expect([`${method} ${path}`, Object.keys(op.responses)]).toEqual([`${method} ${path}`, expect.arrayContaining(['413'])]);
      }
    }
    const upload = doc.paths['/api/v1/brand-lift-studies/{studyId}/artifacts']!.post! as unknown as Record<string, unknown>;
    expect(upload['x-body-limit-bytes']).toBe(2_800_300);
  });
});
