import { z } from 'zod';
import { forbidden } from '../errors';
import { ChannelSchema, ProductSchema, entitledChannels, type Channel, type Product } from './products';

/** Claims we trust from a verified access token (see docs/architecture.md, Authentication). */
export const AccessClaimsSchema = z.object({
  sub: z.string().min(1).max(200),
  org_id: z
    .string()
    .min(1)
    .max(200)
    .regex(/^[A-Za-z0-9][A-Za-z0-9._:-]*$/),
  permissions: z.array(z.string().min(1).max(100)).max(100).default([]),
  product: ProductSchema.default('flightdeck'),
  /** A signed entitlement that narrows the product's channels further. */
  channels: z.array(ChannelSchema).min(1).max(7).optional(),
  /** RFC 8693 actor claim: present only on delegated-agent tokens. */
  act: z.object({ sub: z.string().min(1).max(200) }).optional(),
});

export interface Principal {
  userId: string;
  advertiserId: string;
  product: Product;
  channels: Channel[];
  permissions: string[];
  /** The agent client id when an agent acts for the user; null for a human session. */
  agentClientId: string | null;
  /** The door the request came through, stamped where it enters (absent only until then). */
  via?: Surface;
}

/**
 * Where a request enters: the REST API (`api/middleware/authenticate.ts`), the hosted agent
 * endpoint (`/mcp`, `shared/mcp/agent-credentials.ts`) or the staff and operator console
 * (`api/console/context.ts`), which calls the REST operations in process, and a workspace's
 * automatic rules (`shared/rules/rule-execution.ts`), which act as their own agent.
 */
export type Surface = 'api' | 'mcp' | 'console' | 'rules';

export function principalFromClaims(claims: z.infer<typeof AccessClaimsSchema>): Principal {
  const channels = entitledChannels(claims.product, claims.channels);
  // An entitlement outside the product leaves nothing the caller may do: refused, never a scope of no channels.
  if (channels.length === 0) throw forbidden('The signed entitlement grants no channel of this product.', 'no_channels');
  return {
    userId: claims.sub,
    advertiserId: claims.org_id,
    product: claims.product,
    channels,
    permissions: [...new Set(claims.permissions)].sort(),
    agentClientId: claims.act?.sub ?? null,
  };
}

export const isHuman = (p: Principal) => p.agentClientId === null;
export const hasPermission = (p: Principal, permission: string) => p.permissions.includes(permission);
/** A stable id for "who called": the user, and the agent acting for them if any. */
export const callerId = (p: Principal) => (p.agentClientId ? `${p.userId}|agent:${p.agentClientId}` : p.userId);
