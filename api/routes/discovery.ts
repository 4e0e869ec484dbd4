import { z } from 'zod';
import type { ApiDeps } from '../deps';
import type { RouteDef } from '../http/route';
import { defineRoute } from '../http/route';
import { buildOpenApiDocument } from '../http/openapi';

/** The OpenAPI document (generated from the routes' own schemas) and, in development, the issuer's JWKS. */
export function discoveryRoutes(deps: ApiDeps, allRoutes: () => RouteDef[]) {
  let document: unknown;
  const routes = [
    defineRoute({
      method: 'get',
      path: '/api/v1/openapi.json',
      operationId: 'getOpenApiDocument',
      summary: 'This API as an OpenAPI 3.1 document.',
      tags: ['discovery'],
      access: 'public',
      responses: {
        200: {
          description: 'The OpenAPI document.',
          schema: z.looseObject({ openapi: z.literal('3.1.0'), info: z.looseObject({}), paths: z.looseObject({}) }),
        },
      },
      completeness: 'envelope-only',
      async handler() {
        document ??= buildOpenApiDocument(allRoutes(), { defaultBodyLimitBytes: deps.config.BODY_LIMIT_BYTES });
        return { status: 200, body: document };
      },
    }),
  ];
  const { devIssuer } = deps;
  if (devIssuer) {
    routes.push(
      defineRoute({
        method: 'get',
        path: '/.well-known/jwks.json',
        operationId: 'getDevelopmentJwks',
        summary: 'Public keys of the development issuer (development only).',
        tags: ['discovery'],
        access: 'public',
        responses: { 200: { description: 'A JSON Web Key Set.', schema: z.object({ keys: z.array(z.looseObject({ kty: z.string() })) }) } },
        completeness: 'envelope-only',
        async handler() {
          return { status: 200, body: devIssuer.jwks, headers: { 'cache-control': 'public, max-age=300' } };
        },
      }),
    );
  }
  return routes;
}
