import express from 'express';
import { z } from 'zod';
import { mountRoutes } from '../../api/http/mount';
import { createTestEnv, json, type TestApi, type TestEnv } from '../support/api';
import { apiRoutes } from '../../api/app';
import { defineRoute, type RouteDef } from '../../api/http/route';
import { governedRouteMismatches } from '../../api/http/governed-routes';

let env: TestEnv;
let api: TestApi;
beforeAll(async () => {
  env = await createTestEnv();
  api = await env.api();
});
afterAll(() => env.close());

interface Contract {
  name: string;
  method: string;
  route: string;
}
type Doc = { paths: Record<string, Record<string, { 'x-agent-action'?: string }>> };
const shapeOf = (path: string) => path.replace(/\{[^}]+\}/g, '{}');

describe('the governed action table', () => {
  test('every catalogue action has an operation that runs it, and every governed operation is in the catalogue', async () => {
    const token = await env.issuer.token({ org: 'org-table' });
    const { actions } = await json<{ actions: Contract[] }>(await api.fetch('/api/v1/agent/actions', { token }));
    const doc = await json<Doc>(await api.fetch('/api/v1/openapi.json'));
    const governed = Object.entries(doc.paths).flatMap(([path, ops]) =>
      Object.entries(ops)
        .filter(([, op]) => op['x-agent-action'])
        .map(([method, op]) => ({ name: op['x-agent-action']!, method: method.toUpperCase(), route: shapeOf(path) })),
    );
    const listed = actions.map((a) => ({ name: a.name, method: a.method, route: shapeOf(a.route) }));
    expect(listed.length).toBeGreaterThan(0);
    expect([...listed].sort((a, b) => a.name.localeCompare(b.name))).toEqual([...governed].sort((a, b) => a.name.localeCompare(b.name)));
    expect(listed.map((a) => a.name)).toContain('optimization.reject');
  });

  test('the real routes agree with the table', () => {
    expect(governedRouteMismatches(apiRoutes(api.deps))).toEqual([]);
  });

  const extra = (path: string, governedAction: string, idempotency?: 'required'): RouteDef =>
    defineRoute({
      method: 'post',
      path,
      operationId: `extra${path.length}`,
      summary: 'x',
      tags: ['x'],
      access: 'bearer',
      scope: 'caller',
      body: z.strictObject({}),
      governedAction: governedAction as never,
      ...(idempotency ? { idempotency } : {}),
      responses: { 200: { description: 'x' } },
      async handler() {
        return { status: 200 };
      },
    });

  test('a route that runs an action at another path, a second route for it, or an action the table lacks is refused', () => {
    const routes = apiRoutes(api.deps);
    const moved = routes.map((r) => (r.governedAction === 'optimization.reject' ? { ...r, path: '/api/v1/optimizations/:id/decline' } : r));
    expect(governedRouteMismatches(moved).join('\n')).toMatch(
      /optimization.reject is listed at POST .* but runs at POST \/api\/v1\/optimizations\/:id\/decline/,
    );
    const twice = [...routes, extra('/api/v1/campaigns/:id/launch-again', 'campaign.launch')];
    expect(governedRouteMismatches(twice).join('\n')).toMatch(/campaign.launch is run by 2 routes/);
    const unknown = [...routes, extra('/api/v1/things/:id/zap', 'thing.zap')];
    expect(governedRouteMismatches(unknown).join('\n')).toMatch(/runs action thing.zap, which the action table lacks/);
    const orphaned = routes.filter((r) => r.governedAction !== 'optimization.reject');
    expect(governedRouteMismatches(orphaned).join('\n')).toMatch(/optimization.reject is run by 0 routes/);
  });

  test('an API whose routes and table disagree refuses to start', () => {
    const orphaned = apiRoutes(api.deps).filter((r) => r.governedAction !== 'creative.submit');
    expect(() =>
      mountRoutes(express(), orphaned, {
        db: env.db,
        authenticate: async () => ({}) as never,
        defaultBodyLimitBytes: 1024,
        logger: api.deps.logger,
      }),
    ).toThrow(/creative.submit is run by 0 routes/);
  });
});
