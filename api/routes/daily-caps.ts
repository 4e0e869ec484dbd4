import { actorOf } from '../../shared/auth/actor';
import { DailyCapsRequestSchema, DailyCapsSchema, setDailyCaps } from '../../shared/delivery/daily-caps';
import type { ApiDeps } from '../deps';
import { IdParams, uuidOr404 } from '../http/params';
import { defineRoute, type RouteDef } from '../http/route';

/** Daily spend caps of a campaign and its booked lines (docs/delivery.md, Daily caps). */
export function dailyCapRoutes({ db }: ApiDeps): RouteDef[] {
  return [
    defineRoute({
      method: 'post',
      path: '/api/v1/campaigns/:id/daily-caps',
      operationId: 'setDailyCaps',
      summary:
        "Set or remove the campaign's daily spend cap (its lines together) and its booked lines' caps, counted on UTC days. Flightdeck pauses a line when its day reaches its cap and resumes it at the next day's start.",
      tags: ['delivery'],
      access: 'bearer',
      scope: { resource: 'campaign', param: 'id' },
      params: IdParams,
      body: DailyCapsRequestSchema,
      idempotency: 'required',
      governedAction: 'campaign.cap',
      responses: {
        200: { description: 'The caps now in force.', schema: DailyCapsSchema },
        400: { description: 'Nothing to change, a line not booked in this campaign, or a cap over its line’s budget.' },
        404: { description: 'Not found.' },
        409: { description: 'A stale expectedVersion.' },
      },
      async handler({ principal, params, body }) {
        return { status: 200, body: await setDailyCaps(db, principal, actorOf(principal), uuidOr404(params.id), body) };
      },
    }),
  ];
}
