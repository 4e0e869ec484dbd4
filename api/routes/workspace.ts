import { OverviewQuerySchema, workspaceOverview } from '../../shared/reporting/workspace-overview';
import { OverviewEnvelope } from '../../shared/reporting/workspace-overview-views';
import {
  UpdateWorkspaceSettingsSchema,
  WorkspaceSettingsSchema,
  readWorkspaceSettings,
  writeWorkspaceSettings,
} from '../../shared/workspaces/workspace-settings';
import { assertMayChangeSpendSettings } from '../../shared/auth/spend-authority';
import type { ApiDeps } from '../deps';
import { defineRoute } from '../http/route';

export function workspaceRoutes({ db, config }: ApiDeps) {
  return [
    defineRoute({
      method: 'get',
      path: '/api/v1/workspace/overview',
      operationId: 'workspaceOverview',
      summary:
        'Campaigns and bookings by status, lines needing attention and lines off pace, captured and delivered spend (sandbox apart) and pageviews in a date range, the wallet, open funding requests and pending agent approvals.',
      tags: ['workspace'],
      access: 'bearer',
      scope: 'caller',
      query: OverviewQuerySchema,
      completeness: 'unmodeled',
      responses: {
        200: { description: 'The overview.', schema: OverviewEnvelope },
        400: { description: 'Bad dates or range.' },
        404: { description: 'No such campaign.' },
      },
      async handler({ principal, query }) {
        return { status: 200, body: await workspaceOverview(db, principal, query, config.DELIVERY_PACING_TOLERANCE) };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/api/v1/workspace/settings',
      operationId: 'getWorkspaceSettings',
      summary: "The workspace's spend settings: the maximum commitment above which a plan needs a second approver.",
      tags: ['workspace'],
      access: 'bearer',
      scope: 'caller',
      responses: { 200: { description: 'The settings.', schema: WorkspaceSettingsSchema } },
      async handler({ principal }) {
        return { status: 200, body: await readWorkspaceSettings(db, principal.advertiserId) };
      },
    }),
    defineRoute({
      method: 'put',
      path: '/api/v1/workspace/settings',
      operationId: 'updateWorkspaceSettings',
      summary: 'Sets the spend settings (a person with workspace:admin). null: one approver suffices at any amount.',
      tags: ['workspace'],
      access: 'bearer',
      scope: 'caller',
      authorize: async (principal) => assertMayChangeSpendSettings(principal),
      body: UpdateWorkspaceSettingsSchema,
      responses: {
        200: { description: 'The settings as saved.', schema: WorkspaceSettingsSchema },
        403: { description: 'A delegated agent, or a person without workspace:admin.' },
      },
      async handler({ principal, body }) {
        return { status: 200, body: await writeWorkspaceSettings(db, principal.advertiserId, body) };
      },
    }),
  ];
}
