import { z } from 'zod';
import { AuthContextSchema, describeCaller } from '../../shared/access/auth-context';
import { isHuman } from '../../shared/auth/principal';
import type { ApiDeps } from '../deps';
import { defineRoute } from '../http/route';

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

export function authRoutes({ staff, workspaces }: ApiDeps) {
  return [
    defineRoute({
      method: 'get',
      path: '/api/v1/auth/context',
      operationId: 'getAuthContext',
      // Read by agents and pages on every start.
      lean: true,
      summary: 'Who the caller is: user, advertiser, product, channels, permissions, agent or human, staff or not.',
      tags: ['auth'],
      access: 'bearer',
      scope: 'caller',
      responses: { 200: { description: 'The verified caller.', schema: AuthContextSchema } },
      async handler({ principal }) {
        return { status: 200, body: await describeCaller(staff, workspaces, principal) };
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
        const member = isHuman(principal) ? await staff.find(principal.userId) : null;
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
