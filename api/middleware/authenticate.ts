import type { IncomingMessage } from 'node:http';
import { unauthenticated } from '../../shared/errors';
import type { Principal } from '../../shared/auth/principal';
import type { TokenVerifier } from '../../shared/auth/verifier';
import type { WorkspaceCache } from '../../shared/workspaces/workspace-store';

// The scheme name is case-insensitive (RFC 9110 §11.1): `bearer x.y.z` is as good as `Bearer x.y.z`.
const BEARER = /^Bearer +([A-Za-z0-9_-]+\.[A-Za-z0-9_-]*\.[A-Za-z0-9_-]*)$/i;

/** The JWT of a `Bearer` authorization header, or undefined when the header is not one. */
export const bearerTokenOf = (header: string | undefined): string | undefined => (header ? BEARER.exec(header)?.[1] : undefined);

/** Verifies the bearer token, provisions the caller's workspace on its first request, and says the caller came through the REST API. */
export function authenticator(verify: TokenVerifier, workspaces: WorkspaceCache) {
  return async (req: IncomingMessage): Promise<Principal> => {
    const header = req.headers.authorization;
    if (!header) throw unauthenticated('Send Authorization: Bearer <access token>.');
    const token = bearerTokenOf(header);
    if (!token) throw unauthenticated('The Authorization header must be "Bearer" followed by a JWT.');
    const principal = await verify(token);
    await workspaces.get(principal.advertiserId);
    // A new object: the verifier caches the one it made. This door is the REST API.
    return { ...principal, via: 'api' };
  };
}
