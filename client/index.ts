import createClient from 'openapi-fetch';
import type { paths } from './schema';

export type { components, operations, paths } from './schema';

/**
 * A typed client of the REST API, its types generated from the OpenAPI document
 * (npm run generate:client). Authenticate with `headers: { authorization: 'Bearer …' }`.
 */
export function createFlightdeckClient(baseUrl: string, options: { headers?: Record<string, string>; fetch?: typeof fetch } = {}) {
  return createClient<paths>({ baseUrl, ...options });
}
