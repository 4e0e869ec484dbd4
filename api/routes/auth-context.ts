import { z } from 'zod';
import { ChannelSchema, ProductSchema } from '../../shared/auth/products';
import { isHuman } from '../../shared/auth/principal';
import { findActiveStaff, isActiveStaff } from '../../shared/staff/staff-store';
import type { ApiDeps } from '../deps';
import { defineRoute } from '../http/route';

export const AuthContextSchema = z
  .object({
    user: z.object({ id: z.string() }),
    advertiser: z.object({ id: z.string(), name: z.string() }),
    product: ProductSchema,
    channels: z.array(ChannelSchema),
    permissions: z.array(z.string()),
    actor: z.enum(['human', 'agent']),
    delegated: z.boolean(),
    agent: z.object({ clientId: z.string() }).nullable(),
    staff: z.boolean(),
    workspace: z.object({ pixelKey: z.string(), createdAt: z.string() }),
  })
  .meta({ id: 'AuthContext' });

export const StaffSessionSchema = z
  .union([
    z.object({ access: z.literal(false) }),
    z.object({
      access: z.literal(true),
      userId: z.string(),
      displayName: z.string().nullable(),
      assignedAdvertiserIds: z.array(z.string()),
    }),
  ])
  .meta({ id: 'StaffSession' });

export function authRoutes({ db, workspaces }: ApiDeps) {
  return [
    defineRoute({
      method: 'get',
      path: '/api/v1/auth/context',
      operationId: 'getAuthContext',
      summary: 'Who the caller is: user, advertiser, product, channels, permissions, agent or human, staff or not.',
      tags: ['auth'],
      access: 'bearer',
      scope: 'caller',
      responses: { 200: { description: 'The verified caller.', schema: AuthContextSchema } },
      async handler({ principal }) {
        const workspace = await workspaces.get(principal.advertiserId);
        // Staff access needs a human session and a server-owned membership; a token cannot claim it.
        const staff = isHuman(principal) ? await isActiveStaff(db, principal.userId) : false;
        const body: z.infer<typeof AuthContextSchema> = {
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
        return { status: 200, body };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/api/v1/internal/session',
      operationId: 'getStaffSession',
      summary: 'Staff session: access:false for anyone who is not active staff in a human session.',
      tags: ['staff'],
      access: 'bearer',
      scope: 'caller',
      responses: { 200: { description: 'Whether the caller has staff access, and to which clients.', schema: StaffSessionSchema } },
      async handler({ principal }) {
        const member = isHuman(principal) ? await findActiveStaff(db, principal.userId) : null;
        if (!member) return { status: 200, body: { access: false } };
        return {
          status: 200,
          body: {
            access: true,
            userId: member.userId,
            displayName: member.displayName,
            assignedAdvertiserIds: member.assignedAdvertiserIds,
          },
        };
      },
    }),
  ];
}
