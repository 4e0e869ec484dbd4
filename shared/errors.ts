/**
 * Errors that carry their own HTTP status and stable code. One middleware turns
 * them into RFC 9457 problem+json; anything else becomes an opaque 500.
 */
export type Recovery = 'transient' | 'correctable' | 'terminal';

export interface ProblemIssue {
  path: string;
  message: string;
  code?: string;
}

export class Problem extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    readonly title: string,
    readonly detail: string,
    readonly recovery: Recovery,
    readonly errors?: ProblemIssue[],
    readonly headers?: Record<string, string>,
  ) {
    super(detail);
  }
}

export const badRequest = (detail: string, errors?: ProblemIssue[], code = 'validation_failed') =>
  new Problem(400, code, 'Invalid request', detail, 'correctable', errors);

export const unauthenticated = (detail = 'Sign in again: the access token is missing or invalid.') =>
  new Problem(401, 'unauthenticated', 'Authentication required', detail, 'terminal', undefined, {
    'www-authenticate': 'Bearer',
  });

export const forbidden = (detail: string, code = 'forbidden') => new Problem(403, code, 'Forbidden', detail, 'terminal');

/** The same body whether the resource never existed or belongs to another tenant. */
export const notFound = () => new Problem(404, 'not_found', 'Not found', 'No such resource.', 'terminal');

export const conflict = (detail: string, code = 'conflict', recovery: Recovery = 'correctable') =>
  new Problem(409, code, 'Conflict', detail, recovery);

/** A 422. `correctable` when the caller can fix it by changing the request (another asset, adapter or channel). */
export const unprocessable = (detail: string, code = 'supplier_refused', recovery: Recovery = 'terminal') =>
  new Problem(422, code, 'Unprocessable', detail, recovery);

export const payloadTooLarge = (limit: number) =>
  new Problem(413, 'payload_too_large', 'Payload too large', `The request body exceeds ${limit} bytes.`, 'correctable');

export const rateLimited = (retryAfterSeconds: number) =>
  new Problem(
    429,
    'rate_limited',
    'Too many requests',
    `Rate limit reached. Retry after ${retryAfterSeconds} seconds.`,
    'transient',
    undefined,
    { 'retry-after': String(retryAfterSeconds) },
  );

/** A dependency is down or overloaded: always transient, always with a retry-after. */
export const unavailable = (detail: string, code = 'dependency_unavailable', retryAfterSeconds = 1) =>
  new Problem(503, code, 'Service unavailable', detail, 'transient', undefined, { 'retry-after': String(retryAfterSeconds) });

export const internal = () =>
  new Problem(
    500,
    'internal_error',
    'Internal error',
    'An unexpected error occurred. Inspect state before retrying a mutation.',
    'terminal',
  );
