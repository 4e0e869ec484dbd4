import { OpenAPIRegistry, OpenApiGeneratorV31 } from '@asteasolutions/zod-to-openapi';
import { z, type ZodType } from 'zod';
import type { RouteDef } from './route';

const toOpenApiPath = (p: string) => p.replace(/:([A-Za-z0-9_]+)/g, '{$1}');

const ProblemSchema = z
  .object({
    type: z.string(),
    title: z.string(),
    status: z.number().int(),
    detail: z.string(),
    code: z.string().meta({ description: 'Stable snake_case error code.' }),
    recovery: z.enum(['transient', 'correctable', 'terminal']),
    requestId: z.string(),
    errors: z.array(z.object({ path: z.string(), message: z.string(), code: z.string().optional() })).optional(),
  })
  .meta({ id: 'Problem', description: 'RFC 9457 problem details.' });

const COMMON_ERRORS: Record<number, string> = {
  400: 'Invalid request or unsupported fields.',
  429: 'Rate limit reached; see retry-after.',
  500: 'Internal error. Inspect state before retrying a mutation.',
};
const BEARER_ERRORS: Record<number, string> = {
  401: 'Missing or invalid authentication.',
  503: 'Dependency or authentication verifier unavailable.',
};

const RATE_LIMIT_HEADERS = {
  'x-ratelimit-limit': { description: 'Requests allowed in the window.', schema: { type: 'integer' as const } },
  'x-ratelimit-remaining': { description: 'Requests left in the window.', schema: { type: 'integer' as const } },
  'x-ratelimit-reset': { description: 'Seconds until the window resets.', schema: { type: 'integer' as const } },
  'x-request-id': { description: 'The request id, also in logs and problem bodies.', schema: { type: 'string' as const } },
};

/** The OpenAPI 3.1 document, generated from the very schemas the routes validate with. */
export function buildOpenApiDocument(routes: RouteDef[], serverUrl?: string) {
  const registry = new OpenAPIRegistry();
  registry.registerComponent('securitySchemes', 'bearer', { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' });

  for (const r of routes) {
    const responses: Record<string, unknown> = {};
    const statuses: Record<number, { description: string; schema?: ZodType; contentType?: string }> = {
      ...Object.fromEntries(Object.entries(COMMON_ERRORS).map(([s, d]) => [s, { description: d, schema: ProblemSchema }])),
      ...(r.access === 'bearer'
        ? Object.fromEntries(Object.entries(BEARER_ERRORS).map(([s, d]) => [s, { description: d, schema: ProblemSchema }]))
        : {}),
      ...r.responses,
    };
    for (const [status, doc] of Object.entries(statuses)) {
      const isError = Number(status) >= 400;
      const contentType = doc.contentType ?? (isError ? 'application/problem+json' : 'application/json');
      responses[status] = {
        description: doc.description,
        headers: RATE_LIMIT_HEADERS,
        ...(doc.schema ? { content: { [contentType]: { schema: doc.schema } } } : {}),
      };
    }
    registry.registerPath({
      method: r.method,
      path: toOpenApiPath(r.path),
      operationId: r.operationId,
      summary: r.summary,
      tags: r.tags,
      security: r.access === 'bearer' ? [{ bearer: [] }] : [],
      // How the route keeps to the caller's product scope: clients and the scope tests read it.
      ...(r.scope ? { 'x-flightdeck-scope': r.scope } : {}),
      request: {
        ...(r.params ? { params: r.params as never } : {}),
        ...(r.query ? { query: r.query as never } : {}),
        ...(r.headers ? { headers: r.headers as never } : {}),
        ...(r.body && !r.rawBody ? { body: { content: { 'application/json': { schema: r.body } } } } : {}),
        ...(r.rawBody ? { body: { content: { 'application/octet-stream': { schema: z.string().meta({ format: 'binary' }) } } } } : {}),
      },
      responses: responses as never,
    });
  }

  return new OpenApiGeneratorV31(registry.definitions).generateDocument({
    openapi: '3.1.0',
    info: {
      title: 'Flightdeck media buying API',
      version: '0.1.0',
      description: 'Plan, approve, book and monitor paid media across ctv, audio, tv, cinema, dooh, search and social.',
    },
    ...(serverUrl ? { servers: [{ url: serverUrl }] } : {}),
  });
}
