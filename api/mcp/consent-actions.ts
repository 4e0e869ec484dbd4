import { ACTIONS } from '../../shared/agent/actions';
import type { RouteDef } from '../http/route';
import type { GrantAllows } from '../oauth/pages';
import { PUBLIC_TOOL } from './tools';
import { ROUTE_TOOLS } from './route-tools';

/**
 * Exactly what a grant to /mcp lets an assistant do, as the consent page lists it: every tool by
 * name with its operation's summary (reads apart from the tools that change something), and the
 * governed actions it may prepare, each needing a person's approval of its exact digest.
 */
export function consentActions(routes: RouteDef[]): GrantAllows {
  const tools = ROUTE_TOOLS.flatMap((t) => {
    const route = routes.find((r) => r.operationId === t.operationId);
    return route ? [{ tool: t.name, summary: route.summary, reads: route.method === 'get' }] : [];
  });
  return {
    reads: tools.filter((t) => t.reads && t.tool !== PUBLIC_TOOL).map(({ tool, summary }) => ({ tool, summary })),
    changes: [
      ...tools.filter((t) => !t.reads).map(({ tool, summary }) => ({ tool, summary })),
      {
        tool: 'execute_action',
        summary: 'Execute an action a person approved, exactly as approved, once.',
      },
    ],
    governedActions: ACTIONS.map((a) => a.name),
  };
}
