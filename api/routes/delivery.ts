import { z } from 'zod';
import { actorOf } from '../../shared/auth/actor';
import { forbidden } from '../../shared/errors';
import { CampaignDeliverySchema, campaignDelivery, DeliveryQuerySchema, deliveryCsv } from '../../shared/delivery/campaign-delivery';
import { sandboxPollMessages } from '../../shared/delivery/clock-polls';
import { advanceSandboxClock, sandboxClock, type SandboxClock } from '../../shared/workspaces/sandbox-clock';
import type { ApiDeps } from '../deps';
import { requireHuman } from '../http/guards';
import { IdParams } from '../http/params';
import { defineRoute, type RouteDef } from '../http/route';

const ClockSchema = z.object({
  clock: z.object({
    /** The workspace's sandbox suppliers' "now"; live bookings use real time. */
    now: z.string(),
    today: z.string(),
    offsetDays: z.number().int(),
    realNow: z.string(),
  }),
});
const AdvanceSchema = z.strictObject({ days: z.number().int().min(1).max(120) });

const clockBody = (c: SandboxClock, real = new Date()) => ({
  clock: { now: c.now.toISOString(), today: c.now.toISOString().slice(0, 10), offsetDays: c.offsetDays, realNow: real.toISOString() },
});

/** Delivery and pacing of a campaign, and the workspace's sandbox test clock (docs/delivery.md). */
export function deliveryRoutes(deps: ApiDeps): RouteDef[] {
  const { db, config } = deps;
  // The days passed are asked for at once; if the queues cannot be reached, the scheduled poll catches up.
  const pollNow = async (advertiserId: string, log: typeof deps.logger) => {
    const messages = await sandboxPollMessages(db, advertiserId);
    try {
      await deps.producers.addAll(
        messages.map((m) => ({
          queueName: m.queue,
          name: m.jobName,
          data: m.payload,
          opts: { jobId: m.jobId, removeOnComplete: 100, removeOnFail: 100, attempts: 1 },
        })),
      );
    } catch (err) {
      log.warn({ err: { message: (err as Error).message } }, 'delivery poll after a clock move not queued; the scheduled poll will run');
    }
  };
  const sandboxOnly = () => {
    if (config.BILLING_MODE === 'live') throw forbidden('The sandbox clock runs only where billing is in sandbox mode.', 'sandbox_only');
  };
  return [
    defineRoute({
      method: 'get',
      path: '/api/v1/campaigns/:id/delivery',
      operationId: 'getCampaignDelivery',
      summary:
        "The campaign's delivery: totals and each line's impressions, clicks, completions and spend in the range (default: the flight so far), its pacing over the flight, how old its figures are, and its days. Accept: text/csv gives one row per line and day.",
      tags: ['delivery'],
      access: 'bearer',
      scope: { resource: 'campaign', param: 'id', inRead: true },
      params: IdParams,
      query: DeliveryQuerySchema,
      responses: {
        200: {
          description: 'Delivery and pacing.',
          schema: CampaignDeliverySchema,
          alternatives: { 'text/csv': z.string() },
        },
        400: { description: 'Bad dates or range.' },
        404: { description: 'Not found.' },
      },
      async handler({ principal, params, query, req, res }) {
        const delivery = await campaignDelivery(db, principal, params.id, query, config.DELIVERY_PACING_TOLERANCE);
        // A tool call through /mcp has no HTTP request: it always gets JSON.
        if (req?.accepts(['application/json', 'text/csv']) === 'text/csv') {
          res
            .status(200)
            .type('text/csv; charset=utf-8')
            .setHeader('content-disposition', `attachment; filename="delivery-${delivery.campaignId}.csv"`)
            .send(deliveryCsv(delivery));
          return;
        }
        return { status: 200, body: { delivery } };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/api/v1/sandbox/clock',
      operationId: 'getSandboxClock',
      summary: "The workspace's sandbox test clock: the sandbox suppliers' now, and how many days it runs ahead of real time.",
      tags: ['delivery'],
      access: 'bearer',
      scope: 'caller',
      responses: {
        200: { description: 'The clock.', schema: ClockSchema },
        403: { description: 'Billing is live: there is no sandbox clock.' },
      },
      async handler({ principal }) {
        sandboxOnly();
        return { status: 200, body: clockBody(await sandboxClock(db, principal.advertiserId)) };
      },
    }),
    defineRoute({
      method: 'post',
      path: '/api/v1/sandbox/clock/advance',
      operationId: 'advanceSandboxClock',
      summary:
        "Moves the workspace's sandbox clock forward 1 to 120 days: its sandbox bookings' flights start and end, delivery accrues for the days passed, and closeout follows. Live bookings keep real time.",
      tags: ['delivery'],
      access: 'bearer',
      scope: 'caller',
      body: AdvanceSchema,
      authorize: requireHuman('move the sandbox clock'),
      responses: {
        200: { description: 'The clock after the move.', schema: ClockSchema },
        403: { description: 'A delegated agent, or billing is live.' },
      },
      async handler({ principal, body, log }) {
        sandboxOnly();
        const clock = await advanceSandboxClock(db, principal.advertiserId, body.days, actorOf(principal).actorId);
        await pollNow(principal.advertiserId, log);
        return { status: 200, body: clockBody(clock) };
      },
    }),
  ];
}
