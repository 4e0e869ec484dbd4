import { z } from 'zod';
import { CHANNELS, ChannelSchema, ProductSchema } from '../auth/products';
import { DateTimeSchema } from '../wire';
import { isHuman, type Principal } from '../auth/principal';
import type { StaffCache } from '../staff/staff-cache';
import type { WorkspaceCache } from '../workspaces/workspace-store';

export const AuthContextSchema = z
  .object({
    user: z.object({ id: z.string() }),
    advertiser: z.object({ id: z.string(), name: z.string() }),
    product: ProductSchema,
    channels: z.array(ChannelSchema).min(1).max(CHANNELS.length),
    permissions: z.array(z.string()),
    actor: z.enum(['human', 'agent']),
    delegated: z.boolean(),
    agent: z.object({ clientId: z.string() }).nullable(),
    staff: z.boolean(),
    workspace: z.object({ pixelKey: z.string(), createdAt: DateTimeSchema }),
  })
  .meta({ id: 'AuthContext' });
export type AuthContext = z.infer<typeof AuthContextSchema>;

/** Who a verified caller is, as GET /api/v1/auth/context reports it and the agent endpoint checks it. */
export async function describeCaller(staffCache: StaffCache, workspaces: WorkspaceCache, principal: Principal): Promise<AuthContext> {
  const workspace = await workspaces.get(principal.advertiserId);
  // Staff access needs a human session and a server-owned membership; a token cannot claim it.
  const staff = isHuman(principal) ? await staffCache.isActive(principal.userId) : false;
  return {
    user: { id: principal.userId },
    advertiser: { id: workspace.id, name: workspace.name },
    product: principal.product,
    channels: principal.channels,
    permissions: principal.permissions,
    actor: isHuman(principal) ? 'human' : 'agent',
    delegated: !isHuman(principal),
    agent: principal.agentClientId ? { clientId: principal.agentClientId } : null,
    staff,
    workspace: { pixelKey: workspace.pixelKey, createdAt: workspace.createdAt },
  };
}
