import type { Request } from 'express';
import { unauthenticated } from '../../shared/errors';
import type { Principal } from '../../shared/auth/principal';
import type { TokenVerifier } from '../../shared/auth/verifier';
import type { WorkspaceCache } from '../../shared/workspaces/workspace-store';

const BEARER = /^Bearer ([A-Za-z0-9_-]+\.[A-Za-z0-9_-]*\.[A-Za-z0-9_-]*)$/;

/** Verifies the bearer token and provisions the caller's workspace on its first request. */
export function authenticator(verify: TokenVerifier, workspaces: WorkspaceCache) {
  return async (req: Request): Promise<Principal> => {
    const header = req.headers.authorization;
    if (!header) throw unauthenticated('Send Authorization: Bearer <access token>.');
    const match = BEARER.exec(header);
    if (!match) throw unauthenticated('The Authorization header must be "Bearer" followed by a JWT.');
    const principal = await verify(match[1]!);
    await workspaces.get(principal.advertiserId);
    return principal;
  };
}
