/**
 * Prints the OpenAPI document that GET /api/v1/openapi.json serves, without starting anything:
 * the typed client in client/ is generated from it (npm run generate:client).
 */
import { apiRoutes } from '../api/app';
import type { ApiDeps } from '../api/deps';
import { buildOpenApiDocument } from '../api/http/openapi';
import { ConfigSchema } from '../shared/config/config';

const config = ConfigSchema.parse({ NODE_ENV: 'production' });
// Building routes only reads configuration; nothing is connected.
const routes = apiRoutes({ config } as ApiDeps);
process.stdout.write(`${JSON.stringify(buildOpenApiDocument(routes, { defaultBodyLimitBytes: config.BODY_LIMIT_BYTES }), null, 2)}\n`);
