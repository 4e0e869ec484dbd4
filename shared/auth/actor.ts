import type { Principal, Surface } from './principal';

/** Who did something, as booking events record it. */
export interface Actor {
  actorId: string;
  actor: 'human' | 'agent' | 'system';
  source: 'dev' | 'web' | 'mcp' | 'system';
}

export const SYSTEM: Actor = { actorId: 'flightdeck', actor: 'system', source: 'system' };

/**
 * An event's `source` names the surface it came through, in the specification's words,
 * whoever signed the token and however the service was started: `web` the console, `mcp` the
 * agent endpoint, `dev` the REST API called directly (an integration, a script, a developer's
 * token), `system` the service's own work (`SYSTEM`). See docs/architecture.md, Who did it.
 */
const SOURCE_OF: Record<Surface, Actor['source']> = { console: 'web', mcp: 'mcp', api: 'dev', rules: 'system' };

export function actorOf(p: Principal): Actor {
  // Every door stamps its principal; one that reaches here unstamped is a door that forgot.
  if (!p.via) throw new Error('actorOf: the principal does not say which surface it came through');
  const source = SOURCE_OF[p.via];
  if (p.agentClientId) return { actorId: `${p.userId}|agent:${p.agentClientId}`, actor: 'agent', source };
  return { actorId: p.userId, actor: 'human', source };
}
