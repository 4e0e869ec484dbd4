import type { Principal } from './auth/principal';

/** Who did something, as booking events record it. */
export interface Actor {
  actorId: string;
  actor: 'human' | 'agent' | 'system';
  source: 'dev' | 'web' | 'mcp' | 'system';
}

export const SYSTEM: Actor = { actorId: 'flightdeck', actor: 'system', source: 'system' };

/** Agents reach us through the hosted agent endpoint; people through the web app (or dev tokens locally). */
export function actorOf(p: Principal, authMode: 'jwks' | 'development-issuer'): Actor {
  if (p.agentClientId && p.via === 'mcp') return { actorId: `${p.userId}|agent:${p.agentClientId}`, actor: 'agent', source: 'mcp' };
  if (p.agentClientId)
    return { actorId: `${p.userId}|agent:${p.agentClientId}`, actor: 'agent', source: authMode === 'jwks' ? 'mcp' : 'dev' };
  return { actorId: p.userId, actor: 'human', source: authMode === 'jwks' ? 'web' : 'dev' };
}
