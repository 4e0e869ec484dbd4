import { forbidden } from '../../shared/errors';
import type { Principal } from '../../shared/auth/principal';
import type { RouteDef } from './route';

/**
 * What a delegated agent may change (docs/agent.md, "What an agent may change"). Agents act
 * through the governed flow: a mutation is either a governed action (its route names a row of
 * the action table, and runs only with a step a person approved), one of these, which commit no
 * money, touch no supplier and decide nothing for a person, or refused with 403
 * `agent_not_permitted`. Reads are open to agents within their scope.
 */
export const AGENT_UNGOVERNED_MUTATIONS: Readonly<Record<string, string>> = {
  prepareAgentAction: 'prepares an action for a person to approve',
  recordAgentEvidence: "records evidence on the agent's run",
  resolveAgentExecution: 'records what became of a step the agent executed itself',
  extractPersona: 'turns a brief into a persona, a draft that spends and binds nothing',
  createBuyerSession: 'keeps a buyer workflow; grants no authority',
  appendBuyerSessionMessage: "adds to the agent's own buyer workflow",
  registerGeoLiftDesign: 'binds how a lift will be measured before exposure; spends nothing',
  proveIt: 'computes a lift estimate from the outcomes already imported',
};

export type AgentReach = 'read' | 'governed' | 'ungoverned' | 'refused';

/** How a delegated agent may call this route. */
export function agentReach(route: Pick<RouteDef, 'method' | 'operationId' | 'governedAction'>): AgentReach {
  if (route.method === 'get') return 'read';
  if (route.governedAction) return 'governed';
  return route.operationId in AGENT_UNGOVERNED_MUTATIONS ? 'ungoverned' : 'refused';
}

/** The refusal, for a delegated agent's call to a mutation it may not make (people pass). */
export function assertAgentMayCall(route: Pick<RouteDef, 'method' | 'operationId' | 'governedAction'>, principal: Principal | null): void {
  if (!principal?.agentClientId || agentReach(route) !== 'refused') return;
  throw forbidden(
    'Delegated agents cannot make this change. An agent changes things only through a governed action (GET /api/v1/agent/actions): prepare it, a person approves it, then execute it; anything else is a person’s to do.',
    'agent_not_permitted',
  );
}

/** Entries of the declaration that name no mutating route (a renamed operation): refused at start. */
export function agentReachMismatches(routes: RouteDef[]): string[] {
  return Object.keys(AGENT_UNGOVERNED_MUTATIONS).flatMap((id) => {
    const route = routes.find((r) => r.operationId === id);
    if (!route) return [`agent-reach lists ${id}, which no route has`];
    if (route.method === 'get' || route.governedAction) return [`agent-reach lists ${id}, which is a read or governed`];
    return [];
  });
}
