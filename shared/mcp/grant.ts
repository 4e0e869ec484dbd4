import { createRemoteJWKSet, errors, jwtVerify, type JWTVerifyGetKey } from 'jose';
import { z } from 'zod';
import { unauthenticated, unavailable } from '../errors';
import { AccessClaimsSchema } from '../auth/principal';
import { ChannelSchema, ProductSchema, entitledChannels, type Channel, type Product } from '../auth/products';
import { ALLOWED_ALGORITHMS } from '../auth/verifier';

/**
 * The claims of an access token for the agent endpoint (RFC 9068 style): the user, the
 * workspace the user bound the grant to at consent, the product and channels, and the client
 * the user connected. No permissions: a grant to an agent never carries a person's authority.
 */
export const McpGrantClaimsSchema = z.object({
  sub: AccessClaimsSchema.shape.sub,
  org_id: AccessClaimsSchema.shape.org_id,
  product: ProductSchema.default('flightdeck'),
  channels: z.array(ChannelSchema).min(1).max(7).optional(),
  client_id: z.string().min(1).max(200),
  scope: z.string().max(1000).default(''),
  exp: z.number(),
});

export interface McpGrant {
  userId: string;
  advertiserId: string;
  product: Product;
  channels: Channel[];
  clientId: string;
  scopes: string[];
  /** Seconds since the epoch. */
  expiresAt: number;
}

export type McpGrantVerifier = (token: string) => Promise<McpGrant>;

/** Verifies a token for the agent endpoint: the issuer's keys, its exact `iss`, and this resource's exact URL as `aud`. */
export function createGrantVerifier(opts: { issuer: string; audience: string; jwks: () => Promise<JWTVerifyGetKey> }): McpGrantVerifier {
  return async (token) => {
    let payload: unknown;
    try {
      ({ payload } = await jwtVerify(token, await opts.jwks(), {
        issuer: opts.issuer,
        audience: opts.audience,
        algorithms: ALLOWED_ALGORITHMS,
        requiredClaims: ['exp', 'sub'],
        clockTolerance: 5,
      }));
    } catch (err) {
      if (err instanceof errors.JWTExpired) throw unauthenticated('The agent grant has expired. Connect again.');
      if (err instanceof errors.JWTClaimValidationFailed)
        throw unauthenticated(`The token was refused: ${err.claim} is not this endpoint's.`);
      if (err instanceof errors.JWKSTimeout || (err instanceof TypeError && !(err instanceof errors.JOSEError))) {
        throw unavailable('The authorization server is unavailable. Retry shortly.', 'authorization_server_unavailable');
      }
      throw unauthenticated('The token is not a valid grant for this endpoint.');
    }
    const claims = McpGrantClaimsSchema.safeParse(payload);
    if (!claims.success) throw unauthenticated('The grant lacks the claims this endpoint needs (sub, org_id, client_id).');
    const c = claims.data;
    return {
      userId: c.sub,
      advertiserId: c.org_id,
      product: c.product,
      channels: entitledChannels(c.product, c.channels),
      clientId: c.client_id,
      scopes: c.scope.split(' ').filter(Boolean),
      expiresAt: c.exp,
    };
  };
}

/** The issuer's published keys, fetched once and refetched on an unknown key id (at most every 30 s). */
export function remoteKeys(jwksUri: string): JWTVerifyGetKey {
  return createRemoteJWKSet(new URL(jwksUri), { cooldownDuration: 30_000, cacheMaxAge: 10 * 60_000, timeoutDuration: 3000 });
}
