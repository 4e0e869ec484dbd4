import { z } from 'zod';
import { unauthenticated } from '../errors';
import { AccessClaimsSchema } from '../auth/principal';
import { ChannelSchema, ProductSchema, entitledChannels, type Channel, type Product } from '../auth/products';
import { createJwtVerifier, type KeySource } from '../auth/verifier';

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
  /** The consent (grant) the token was issued under, when the issuer names it. */
  grant_id: z.string().min(1).max(200).optional(),
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
  /** The consent behind the token, if the issuer names it (the development server always does). */
  grantId?: string;
}

export type McpGrantVerifier = (token: string) => Promise<McpGrant>;

/**
 * Verifies a token for the agent endpoint: the issuer's keys, its exact `iss`, and this
 * resource's exact URL as `aud`, by the API's own verifier (so keys the issuer cannot serve are
 * a 503 while it is down, and keys it served before are used while it is down).
 */
export function createGrantVerifier(opts: {
  issuer: string;
  audience: string;
  keys: KeySource | (() => Promise<KeySource>);
  verifiedTokenMaxAgeMs?: number;
}): McpGrantVerifier {
  return createJwtVerifier({
    issuer: opts.issuer,
    audience: opts.audience,
    keys: opts.keys,
    verifiedTokenMaxAgeMs: opts.verifiedTokenMaxAgeMs ?? 60_000,
    refusals: {
      expired: 'The agent grant has expired. Connect again.',
      claim: (name) => `The token was refused: ${name} is not this endpoint's.`,
      invalid: 'The token is not a valid grant for this endpoint.',
    },
    claims(payload): McpGrant {
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
        ...(c.grant_id ? { grantId: c.grant_id } : {}),
      };
    },
  });
}
