import { ACTION_TABLE, type ActionName } from '../../shared/agent/actions';
import type { RouteDef } from './route';
import { agentReachMismatches } from './agent-reach';

/** Path parameters named alike, so that `/campaigns/{campaignId}` and `/campaigns/:id` compare equal. */
const shapeOf = (path: string) => path.replace(/\{[^}]+\}|:[A-Za-z0-9_]+/g, '{}');

/**
 * Every row of the action table has exactly one route that runs it, at the row's method and
 * path, with the row's idempotency policy; no route runs an action the table lacks. Returns what
 * disagrees (empty when all is well).
 */
export function governedRouteMismatches(routes: RouteDef[]): string[] {
  const problems: string[] = [];
  for (const [name, contract] of Object.entries(ACTION_TABLE) as Array<[ActionName, (typeof ACTION_TABLE)[ActionName]]>) {
    const runners = routes.filter((r) => r.governedAction === name);
    if (runners.length !== 1) {
      problems.push(`action ${name} is run by ${runners.length} routes; it needs exactly one`);
      continue;
    }
    const route = runners[0]!;
    if (route.method.toUpperCase() !== contract.method || shapeOf(route.path) !== shapeOf(contract.route)) {
      problems.push(
        `action ${name} is listed at ${contract.method} ${contract.route} but runs at ${route.method.toUpperCase()} ${route.path}`,
      );
    }
    const idempotency = route.idempotency === 'required' ? 'required' : 'governed-execution-receipt';
    if (idempotency !== contract.idempotency) {
      problems.push(`action ${name} is listed with idempotency ${contract.idempotency} but its route has ${idempotency}`);
    }
  }
  for (const route of routes) {
    if (route.governedAction && !(route.governedAction in ACTION_TABLE)) {
      problems.push(`${route.operationId} runs action ${route.governedAction}, which the action table lacks`);
    }
  }
  return problems;
}

/** Refuses to start an API whose governed routes and action table have drifted apart. */
export function requireGovernedRoutes(routes: RouteDef[]): void {
  const problems = [...governedRouteMismatches(routes), ...agentReachMismatches(routes)];
  if (problems.length) throw new Error(`Governed actions and routes disagree:\n  ${problems.join('\n  ')}`);
}
