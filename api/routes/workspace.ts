import { OverviewQuerySchema, workspaceOverview } from '../../shared/reporting/workspace-overview';
import { OverviewEnvelope } from '../../shared/reporting/workspace-overview-views';
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
  ];
}
