import { OpenAPIRegistry, OpenApiGeneratorV31 } from '@asteasolutions/zod-to-openapi';
import { z, type ZodType } from 'zod';
import { DIGEST_HEADER, STEP_HEADER } from '../../shared/agent/execution';
import type { ResponseDoc, RouteDef } from './route';

const toOpenApiPath = (p: string) => p.replace(/:([A-Za-z0-9_]+)/g, '{$1}');

/** RFC 9457 problem details; some operations add their own extension members (e.g. prove-it's figures). */
export const ProblemSchema = z
  .looseObject({
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

const ERROR_MEANINGS: Record<number, string> = {
  400: 'Invalid request or unsupported fields.',
  401: 'Missing or invalid authentication.',
  403: 'Permission or product scope refused.',
  404: 'Route or tenant-scoped resource not found.',
  409: 'State, revision, approval, funding or idempotency conflict.',
  422: 'Supplier configuration, capability or upstream refusal.',
  431: 'The request line and headers exceed 16 KiB (refused before the request is read, so not counted by the rate limiter).',
  429: 'Rate limit reached; wait retry-after seconds.',
  500: 'Internal error. Inspect state before retrying a mutation.',
  503: 'Dependency or authentication verifier unavailable; retry after retry-after seconds.',
};

/**
 * The errors any operation can answer, whatever it declares: bad input, the rate limiter (429,
 * or 503 when it is itself down), a crash; bearer routes add authentication and permission or
 * product refusals; a path parameter can name nothing; a body can be too large; a key reused with
 * another body, or while its first request is still running, is an idempotency conflict.
 */
function implicitErrors(r: RouteDef): number[] {
  const statuses = [400, 429, 431, 500, 503];
  if (r.access === 'bearer') statuses.push(401, 403);
  if (r.params) statuses.push(404);
  if (r.body) statuses.push(413);
  if (r.idempotency === 'required' || r.idempotency === 'optional') statuses.push(409);
  return statuses;
}

const integerHeader = (description: string) => ({ description, required: true, schema: { type: 'integer' as const, minimum: 0 } });

/** Every response carries these (the rate limiter runs before everything, errors and unknown routes included). */
const EVERY_RESPONSE_HEADERS = {
  'x-ratelimit-limit': integerHeader('Requests allowed in the window.'),
  'x-ratelimit-remaining': integerHeader('Requests left in the window.'),
  'x-ratelimit-reset': integerHeader('Seconds until the window resets.'),
  'x-request-id': { description: 'The request id, also in logs and problem bodies.', required: true, schema: { type: 'string' as const } },
};
const RETRY_AFTER = { 'retry-after': integerHeader('Minimum seconds to wait before retrying.') };
const WWW_AUTHENTICATE = {
  'www-authenticate': { description: 'The Bearer challenge.', required: true, schema: { type: 'string' as const } },
};

function headersFor(status: number, doc: ResponseDoc) {
  if (status === 431) return { 'x-request-id': EVERY_RESPONSE_HEADERS['x-request-id'] };
  return {
    ...EVERY_RESPONSE_HEADERS,
    ...(status === 429 || status === 503 ? RETRY_AFTER : {}),
    ...(status === 401 ? WWW_AUTHENTICATE : {}),
    ...doc.headers,
  };
}

/** The idempotency policies of the spec, per operation. */
export function idempotencyPolicyOf(r: RouteDef): 'required' | 'governed-execution-receipt' | 'optional' | 'not-generalized' {
  if (r.idempotency === 'required') return 'required';
  if (r.governedAction) return 'governed-execution-receipt';
  if (r.idempotency === 'optional') return 'optional';
  return 'not-generalized';
}

function requestHeaders(r: RouteDef) {
  const shape: Record<string, ZodType> = {};
  if (r.idempotency === 'required') {
    shape['idempotency-key'] = z.uuid().meta({
      description: 'Policy `required`: a uuid per logical request; reuse it when retrying. The first response for a key is replayed.',
    });
  }
  if (r.governedAction) {
    shape[STEP_HEADER] = z
      .string()
      .min(1)
      .optional()
      .meta({ description: `Delegated agents only: the approved execute-step id of agent action ${r.governedAction}. People omit it.` });
    shape[DIGEST_HEADER] = z
      .string()
      .regex(/^[a-f0-9]{64}$/)
      .optional()
      .meta({ description: 'Delegated agents only: the approved action digest, sent together with the step id.' });
  }
  return Object.keys(shape).length ? z.object(shape) : undefined;
}

const mergeHeaders = (a: ZodType | undefined, b: ZodType | undefined): ZodType | undefined =>
  a && b ? (a as z.ZodObject).extend((b as z.ZodObject).shape) : (a ?? b);

/** The OpenAPI 3.1 document, generated from the very schemas the routes validate and shape responses with. */
export function buildOpenApiDocument(routes: RouteDef[], opts: { defaultBodyLimitBytes: number; serverUrl?: string }) {
  const { serverUrl } = opts;
  const registry = new OpenAPIRegistry();
  registry.registerComponent('securitySchemes', 'bearer', { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' });

  for (const r of routes) {
    const statuses: Record<number, ResponseDoc> = {};
    const bodyLimit = r.bodyLimitBytes ?? opts.defaultBodyLimitBytes;
    for (const status of implicitErrors(r)) statuses[status] = { description: ERROR_MEANINGS[status]! };
    if (r.body) statuses[413] = { description: `The request body, counted as sent, is over ${bodyLimit} bytes.` };
    Object.assign(statuses, r.responses);
    const responses: Record<string, unknown> = {};
    for (const [key, doc] of Object.entries(statuses)) {
      const status = Number(key);
      const isError = status >= 400;
      const schema = isError ? (doc.schema ?? ProblemSchema) : doc.schema;
      const contentType = doc.contentType ?? (isError ? 'application/problem+json' : 'application/json');
      responses[key] = {
        description: doc.description,
        headers: headersFor(status, doc),
        ...(schema
          ? {
              content: {
                [contentType]: { schema },
                ...Object.fromEntries(Object.entries(doc.alternatives ?? {}).map(([type, alt]) => [type, { schema: alt }])),
              },
            }
          : {}),
      };
    }
    const headers = mergeHeaders(r.headers, requestHeaders(r));
    registry.registerPath({
      method: r.method,
      path: toOpenApiPath(r.path),
      operationId: r.operationId,
      summary: r.summary,
      tags: r.tags,
      security: r.access === 'bearer' ? [{ bearer: [] }] : [],
      'x-response-completeness': r.completeness ?? 'modeled',
      'x-idempotency-policy': idempotencyPolicyOf(r),
      ...(r.governedAction ? { 'x-agent-action': r.governedAction } : {}),
      // How the route keeps to the caller's product scope: clients and the scope tests read it.
      ...(r.scope
        ? { 'x-flightdeck-scope': typeof r.scope === 'object' ? { resource: r.scope.resource, param: r.scope.param } : r.scope }
        : {}),
      ...(r.body ? { 'x-body-limit-bytes': bodyLimit } : {}),
      request: {
        ...(r.params ? { params: r.params as never } : {}),
        ...(r.query ? { query: r.query as never } : {}),
        ...(headers ? { headers: headers as never } : {}),
        ...(r.body && !r.rawBody ? { body: { content: { 'application/json': { schema: r.body } } } } : {}),
        ...(r.rawBody
          ? {
              body: {
                content: Object.fromEntries(
                  (r.rawBodyTypes ?? ['application/octet-stream']).map((t) => [t, { schema: z.string().meta({ format: 'binary' }) }]),
                ),
              },
            }
          : {}),
      },
      responses: responses as never,
    });
  }

  const document = new OpenApiGeneratorV31(registry.definitions).generateDocument({
    openapi: '3.1.0',
    info: {
      title: 'Flightdeck media buying API',
      version: '0.1.0',
      description: 'Plan, approve, book and monitor paid media across ctv, audio, tv, cinema, dooh, search and social.',
    },
    ...(serverUrl ? { servers: [{ url: serverUrl }] } : {}),
  });
  optionalWhenDefaulted(document);
  return document;
}

/**
 * A field with a default may be left out of a request: the generator lists it as required (the
 * parsed output always has it), which would make typed clients send what the API fills in.
 */
function optionalWhenDefaulted(node: unknown): void {
  if (Array.isArray(node)) {
    for (const item of node) optionalWhenDefaulted(item);
    return;
  }
  if (!node || typeof node !== 'object') return;
  const schema = node as { properties?: Record<string, { default?: unknown }>; required?: string[] };
  if (schema.properties && Array.isArray(schema.required)) {
    schema.required = schema.required.filter((name) => schema.properties![name]?.default === undefined);
    if (schema.required.length === 0) delete schema.required;
  }
  for (const value of Object.values(node)) optionalWhenDefaulted(value);
}
