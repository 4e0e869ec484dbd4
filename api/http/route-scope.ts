import type { Knex } from 'knex';
import type { Principal } from '../../shared/auth/principal';
import { requireInScope } from '../../shared/access/resource-scope';
import type { RouteDef } from './route';

/**
 * The resource a route's path names must be within the caller's product scope, or it is not
 * found. Every way into a route (HTTP, the agent endpoint's tools) runs this one check.
 */
export async function requireRouteScope(db: Knex, route: RouteDef, principal: Principal | null, params: unknown): Promise<void> {
  const scope = route.scope;
  if (!principal || !scope || typeof scope !== 'object' || scope.inRead) return;
  await requireInScope(db, principal, scope.resource, String((params as Record<string, unknown>)[scope.param] ?? ''));
}
