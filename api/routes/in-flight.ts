import { z } from 'zod';
import { actorOf } from '../../shared/auth/actor';
import { AmendmentRequestSchema, AmendmentSchema, amendCampaign, listAmendments } from '../../shared/bookings/amendments';
import { BookingEnvelope } from '../../shared/bookings/booking-schemas';
import { SpendFiguresSchema } from '../../shared/bookings/spend-figures';
import { findBookingById } from '../../shared/bookings/booking-store';
import { CampaignControlResultSchema, controlCampaign } from '../../shared/bookings/campaign-control';
import { CampaignControlSchema, controlLine, LineControlSchema, type Control } from '../../shared/bookings/lines/control';
import { visibleBooking } from '../../shared/bookings/visible-booking';
import { relayAfterCommit } from '../../shared/outbox/outbox';
import type { ApiDeps } from '../deps';
import { requireHuman } from '../http/guards';
import { IdParams, LineParams, uuidOr404 } from '../http/params';
import { defineRoute, type RouteDef } from '../http/route';

const SUMMARY: Record<Control, { campaign: string; line: string }> = {
  pause: {
    campaign: "Pause every running line of the campaign's open booking: each supplier is asked to stop spending. 202: inspect every line.",
    line: 'Pause one running line (its supplier is asked to stop spending until resumed).',
  },
  resume: {
    campaign: "Resume every paused line (and enable staged lines whose evidence allows it) of the campaign's open booking.",
    line: 'Resume one paused line, or enable a staged one whose evidence allows it.',
  },
  stop: {
    campaign: 'Stop the campaign for good: every line of its open booking that can still run is ended; it will not run again.',
    line: 'End one line for good: it will not run again.',
  },
};

/** In-flight control of a running campaign: pause, resume and stop (whole campaign or one line), and budget amendments. */
export function inFlightRoutes(deps: ApiDeps): RouteDef[] {
  const { db, logger, config } = deps;
  const relay = (log: typeof logger | undefined, context: Record<string, unknown>, queued: Parameters<typeof relayAfterCommit>[4]) =>
    relayAfterCommit(db, deps.producers.addAll, log ?? logger, context, queued);

  const campaignControl = (control: Control) =>
    defineRoute({
      method: 'post',
      path: `/api/v1/campaigns/:id/${control}`,
      operationId: `${control}Campaign`,
      summary: SUMMARY[control].campaign,
      tags: ['bookings'],
      access: 'bearer',
      scope: { resource: 'campaign', param: 'id' },
      params: IdParams,
      body: CampaignControlSchema.optional(),
      governedAction: `campaign.${control}`,
      responses: {
        202: {
          description: 'Asked of every line that can take it; the others are listed with the reason.',
          schema: CampaignControlResultSchema,
        },
        404: { description: 'Not found.' },
        409: { description: 'No open booking, or no line can take it now (the lines and reasons are named).' },
      },
      async handler({ principal, params, body, log }) {
        const actor = actorOf(principal);
        const result = await controlCampaign(db, principal, actor, uuidOr404(params.id), control, body?.note);
        await relay(log, { bookingId: result.booking.id }, result.queued);
        return { status: 202, body: { booking: result.booking, requested: result.requested, skipped: result.skipped } };
      },
    });

  const lineControl = (control: Control) =>
    defineRoute({
      method: 'post',
      path: `/api/v1/bookings/:bookingId/lines/:lineId/${control}`,
      operationId: `${control}Line`,
      summary: SUMMARY[control].line,
      tags: ['bookings'],
      access: 'bearer',
      scope: { resource: 'booking', param: 'bookingId' },
      params: LineParams,
      body: LineControlSchema,
      // Pause and resume are governed actions (an agent's, or an automatic rule's, under an approval); a stop is a person's.
      ...(control === 'stop'
        ? { authorize: requireHuman('stop a line (agents use the campaign.stop action)') }
        : { governedAction: `line.${control}` as const }),
      responses: {
        202: { description: 'Asked of the supplier; inspect the line.', schema: BookingEnvelope },
        403: { description: 'A delegated agent without an approved step, or stopping a line (a person’s to do).' },
        404: { description: 'Not found.' },
        409: { description: 'A stale expectedVersion, or a move the line cannot take now (the allowed moves are named).' },
      },
      async handler({ principal, params, body, log }) {
        const { id: bookingId } = await visibleBooking(db, principal, params.bookingId);
        const lineId = uuidOr404(params.lineId);
        const result = await controlLine(db, { bookingId, lineId }, control, actorOf(principal), body);
        await relay(log, { bookingId, lineId }, result.queued);
        return { status: 202, body: { booking: (await findBookingById(db, bookingId))! } };
      },
    });

  return [
    ...(['pause', 'resume', 'stop'] as const).flatMap((c) => [campaignControl(c), lineControl(c)]),
    defineRoute({
      method: 'post',
      path: '/api/v1/campaigns/:id/amendments',
      operationId: 'amendCampaign',
      summary:
        "Change running lines' budgets (and the flight's end date): one budget change per line through its supplier. A live increase holds its difference from the wallet first.",
      tags: ['bookings'],
      access: 'bearer',
      scope: { resource: 'campaign', param: 'id' },
      params: IdParams,
      body: AmendmentRequestSchema,
      idempotency: 'required',
      governedAction: 'campaign.amend',
      responses: {
        202: {
          description: 'Asked of each changed line’s supplier; inspect the amendment and the lines.',
          schema: z.object({ amendment: AmendmentSchema, spendFigures: SpendFiguresSchema }),
        },
        400: { description: 'Nothing to change, a line not in the booking, or an end date in the past.' },
        404: { description: 'Not found.' },
        409: {
          description:
            'A stale expectedVersion, a line that cannot be amended now, a budget below what the line has spent, lines over the maximum commitment (commitment_limit_exceeded), or insufficient_funds.',
        },
        422: { description: 'A supplier cannot move a running line’s end date.' },
      },
      async handler({ principal, params, body, log }) {
        const actor = actorOf(principal);
        const { amendment, queued, spendFigures } = await amendCampaign(db, principal, actor, uuidOr404(params.id), body, {
          pollEveryMs: config.DELIVERY_POLL_EVERY_MS,
        });
        await relay(log, { amendmentId: amendment.id }, queued);
        const { byLine: _byLine, ...figures } = spendFigures;
        return { status: 202, body: { amendment, spendFigures: figures } };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/api/v1/campaigns/:id/amendments',
      operationId: 'listAmendments',
      summary: "The campaign's amendments, newest first, with each line's change and where it stands.",
      tags: ['bookings'],
      access: 'bearer',
      scope: { resource: 'campaign', param: 'id' },
      params: IdParams,
      responses: {
        200: { description: 'Amendments.', schema: z.object({ amendments: z.array(AmendmentSchema) }) },
        404: { description: 'Not found.' },
      },
      async handler({ principal, params }) {
        return { status: 200, body: { amendments: await listAmendments(db, principal, uuidOr404(params.id)) } };
      },
    }),
  ];
}
