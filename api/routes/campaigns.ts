import { z } from 'zod';
import { forbidden, notFound } from '../../shared/errors';
import { actorOf } from '../../shared/auth/actor';
import { assertMayApprovePlan } from '../../shared/auth/spend-authority';
import {
  CreateCampaignSchema,
  ApprovePlanSchema,
  PlanEnvelope,
  PlanSchema,
  ReplacePlanSchema,
} from '../../shared/campaigns/campaign-schemas';
import { createCampaign, findCampaign, listCampaigns } from '../../shared/campaigns/campaign-store';
import { approvePlan, findPlan, findPlanForCampaign, replacePlan } from '../../shared/plans/plan-store';
import { relayAfterCommit } from '../../shared/outbox/outbox';
import { launchCampaign } from '../../shared/bookings/launch';
import { BookingEnvelope, BookingSchema } from '../../shared/bookings/booking-schemas';
import { listCampaignBookings } from '../../shared/bookings/booking-store';
import { CampaignViewSchema, withStates } from '../../shared/bookings/campaign-state';
import type { ApiDeps } from '../deps';
import { defineRoute } from '../http/route';
import { IdParams, uuidOr404 } from '../http/params';

const CampaignEnvelope = z.object({ campaign: CampaignViewSchema, plan: PlanSchema.nullable().optional() });
const ListQuery = z.strictObject({ limit: z.coerce.number().int().min(1).max(100).default(50) });

export function campaignRoutes(deps: ApiDeps) {
  const { db, config, logger } = deps;

  const load = async (principal: Parameters<typeof findCampaign>[1], id: string) => {
    const campaign = await findCampaign(db, principal, uuidOr404(id));
    if (!campaign) throw notFound();
    return campaign;
  };

  return [
    defineRoute({
      method: 'post',
      path: '/api/v1/campaigns',
      operationId: 'createCampaign',
      summary: 'Create a campaign: dates, budget and maximum commitment in minor units, channels within your product.',
      tags: ['campaigns'],
      access: 'bearer',
      scope: 'request',
      body: CreateCampaignSchema,
      responses: {
        201: { description: 'Created.', schema: CampaignEnvelope },
        403: { description: 'A channel outside your product.' },
        422: { description: 'The flight has ended (flight_ended).' },
      },
      async handler({ principal, body }) {
        const outside = body.channels.filter((c) => !principal.channels.includes(c));
        if (outside.length) throw forbidden(`Your product does not include ${outside.join(', ')}.`, 'channel_not_entitled');
        const campaign = await createCampaign(db, principal, body, config.EXECUTION_MODE_DEFAULT);
        return { status: 201, body: { campaign: { ...campaign, state: 'not-launched' } } };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/api/v1/campaigns',
      operationId: 'listCampaigns',
      summary: 'Your campaigns, newest first.',
      tags: ['campaigns'],
      access: 'bearer',
      scope: 'filtered',
      query: ListQuery,
      responses: { 200: { description: 'Campaigns.', schema: z.object({ campaigns: z.array(CampaignViewSchema) }) } },
      async handler({ principal, query }) {
        const campaigns = await listCampaigns(db, principal, query.limit);
        return { status: 200, body: { campaigns: await withStates(db, principal.advertiserId, campaigns) } };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/api/v1/campaigns/:id',
      operationId: 'getCampaign',
      // Polled by agents for the campaign's state.
      lean: true,
      summary: 'A campaign and its plan.',
      tags: ['campaigns'],
      access: 'bearer',
      scope: { resource: 'campaign', param: 'id', inRead: true },
      params: IdParams,
      responses: { 200: { description: 'The campaign.', schema: CampaignEnvelope }, 404: { description: 'Not found.' } },
      async handler({ principal, params }) {
        const campaign = await load(principal, params.id);
        const [stored, [view]] = await Promise.all([
          findPlanForCampaign(db, principal, campaign),
          withStates(db, principal.advertiserId, [campaign]),
        ]);
        return { status: 200, body: { campaign: view, plan: stored?.plan ?? null } };
      },
    }),
    defineRoute({
      method: 'put',
      path: '/api/v1/campaigns/:id/plan',
      operationId: 'replacePlan',
      summary:
        "Create or replace the campaign's plan lines. Replacing voids any approval. A running campaign's plan is not replaced (409 plan_locked_in_flight): amend its lines instead.",
      tags: ['plans'],
      access: 'bearer',
      scope: { resource: 'campaign', param: 'id' },
      params: IdParams,
      body: ReplacePlanSchema,
      responses: {
        200: { description: 'The plan.', schema: PlanEnvelope },
        404: { description: 'Not found.' },
        409: { description: 'Stale expectedVersion, or the campaign is running (plan_locked_in_flight: use an amendment).' },
        422: { description: 'An adapter cannot book that channel or mode.' },
      },
      async handler({ principal, params, body }) {
        const { plan } = await replacePlan(db, principal, uuidOr404(params.id), body);
        return { status: 200, body: { plan } };
      },
    }),
    defineRoute({
      method: 'post',
      path: '/api/v1/campaigns/:id/plan/approve',
      operationId: 'approvePlan',
      summary:
        'Approve the plan (a person with plan:approve): records the exact snapshot and its SHA-256 digest. Above the workspace second-approval amount, two different people must approve.',
      tags: ['plans'],
      access: 'bearer',
      scope: { resource: 'campaign', param: 'id' },
      // Who may approve is known from the token: refused before the request is read (the domain checks it too).
      authorize: async (principal) => assertMayApprovePlan(principal),
      params: IdParams,
      body: ApprovePlanSchema,
      responses: {
        200: { description: 'Approved.', schema: PlanEnvelope },
        403: { description: 'Delegated agents cannot approve; a person needs plan:approve.' },
        404: { description: 'Not found.' },
        409: { description: 'Stale expectedVersion, an open booking, or this person has already approved (second_approver_required).' },
        422: { description: 'The flight has ended (flight_ended).' },
      },
      async handler({ principal, params, body }) {
        const { plan } = await approvePlan(db, principal, uuidOr404(params.id), body.expectedVersion);
        return { status: 200, body: { plan } };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/api/v1/plans/:id',
      operationId: 'getPlan',
      summary: 'A plan.',
      tags: ['plans'],
      access: 'bearer',
      scope: { resource: 'plan', param: 'id' },
      params: IdParams,
      responses: { 200: { description: 'The plan.', schema: PlanEnvelope }, 404: { description: 'Not found.' } },
      async handler({ principal, params }) {
        const stored = await findPlan(db, principal, uuidOr404(params.id));
        if (!stored) throw notFound();
        return { status: 200, body: { plan: stored.plan } };
      },
    }),
    defineRoute({
      method: 'post',
      path: '/api/v1/campaigns/:id/launch',
      operationId: 'launchCampaign',
      summary: 'Launch the approved plan: reserves the commitment (live) and queues one supplier operation per line. 202 never means live.',
      tags: ['bookings'],
      access: 'bearer',
      // The launch's first step, its locking read of the campaign, applies the scope (findCampaign).
      scope: { resource: 'campaign', param: 'id', inRead: true },
      params: IdParams,
      body: z.strictObject({}).optional(),
      governedAction: 'campaign.launch',
      responses: {
        202: { description: 'Booked and queued; inspect every line.', schema: BookingEnvelope },
        200: { description: 'This approved snapshot was launched before; the existing booking.', schema: BookingEnvelope },
        403: { description: 'A person without campaign:launch, or an agent without an approved step.' },
        404: { description: 'Not found.' },
        409: { description: 'Not approved, changed since approval, or unfunded.' },
        422: { description: 'Supplier access or capability refused, or the flight has ended (flight_ended).' },
      },
      async handler({ principal, params, log }) {
        const result = await launchCampaign(db, principal, actorOf(principal), uuidOr404(params.id), {
          confirmationSlaHours: config.CONFIRMATION_SLA_HOURS,
        });
        await relayAfterCommit(db, deps.producers.addAll, log ?? logger, { bookingId: result.booking.id }, result.queued);
        return { status: result.created ? 202 : 200, body: { booking: result.booking } };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/api/v1/campaigns/:id/bookings',
      operationId: 'listCampaignBookings',
      // Polled by agents and the console for every line of a campaign.
      lean: true,
      summary: "A campaign's bookings with their lines and events, newest first.",
      tags: ['bookings'],
      access: 'bearer',
      scope: { resource: 'campaign', param: 'id', inRead: true },
      params: IdParams,
      responses: {
        200: { description: 'Bookings.', schema: z.object({ bookings: z.array(BookingSchema) }) },
        404: { description: 'Not found.' },
      },
      async handler({ principal, params }) {
        const campaign = await load(principal, params.id);
        return { status: 200, body: { bookings: await listCampaignBookings(db, campaign.id) } };
      },
    }),
  ];
}
