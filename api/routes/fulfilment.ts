import { z } from 'zod';
import { notFound } from '../../shared/errors';
import { actorOf } from '../../shared/auth/actor';
import type { Principal } from '../../shared/auth/principal';
import { requireAssigned, requireStaff } from '../../shared/staff/staff-access';
import { BookingEnvelope, BookingSchema } from '../../shared/bookings/booking-schemas';
import { findBookingById } from '../../shared/bookings/booking-store';
import { FulfilmentQuerySchema, listFulfilmentQueue } from '../../shared/bookings/fulfilment-queue';
import {
  ClaimSchema,
  ConfirmSchema,
  RejectSchema,
  ResolveSchema,
  StartSchema,
  UncertainSchema,
  claimLine,
  confirmLine,
  markUncertain,
  rejectLine,
  resolveLine,
  startLine,
  type Operator,
} from '../../shared/bookings/lines/staff/staff-actions';
import { DeliveryEntrySchema, enterDelivery } from '../../shared/delivery/staff-entry';
import { FollowUpDoneSchema, completeFollowUp } from '../../shared/bookings/follow-ups';
import { verificationSettingsFor } from '../../shared/delivery/control-verification';
import { finalizeMonthByStaff } from '../../shared/delivery/finality';
import { PeriodSchema } from '../../shared/reconciliation/reconciliation-views';
import type { ApiDeps } from '../deps';
import { defineRoute, type RouteDef } from '../http/route';
import { LineParams, uuidOr404 } from '../http/params';

const LINE_ERRORS = {
  404: { description: 'Not staff, not assigned to this client, or no such line.' },
  409: { description: 'Stale expectedVersion, a transition the line cannot take, or a claim conflict.' },
};

/** Staff line operations all look alike: staff and assignment checks, one domain call, the booking back. */
function lineOperation<S extends z.ZodType>(
  deps: ApiDeps,
  op: {
    name: string;
    summary: string;
    body: S;
    run: (ref: { bookingId: string; lineId: string }, body: z.output<S>, who: Operator & { staffId: string }) => Promise<unknown>;
  },
): RouteDef {
  return defineRoute({
    method: 'post',
    path: `/api/v1/internal/fulfilment/bookings/:bookingId/lines/:lineId/${op.name}`,
    operationId: `fulfilment${op.name.replace(/(^|-)(\w)/g, (_m, _d, c: string) => c.toUpperCase())}Line`,
    summary: op.summary,
    tags: ['staff'],
    access: 'bearer',
    scope: 'staff',
    params: LineParams,
    body: op.body,
    authorize: staffOnly(deps),
    responses: { 200: { description: 'The booking after the change.', schema: BookingEnvelope }, ...LINE_ERRORS },
    async handler({ principal, params, body }) {
      const { staff, ref } = await staffLine(deps, principal, params);
      await op.run(ref, body as z.output<S>, {
        actor: actorOf(principal),
        userId: principal.userId,
        staffId: staff.id,
      });
      return { status: 200, body: { booking: (await findBookingById(deps.db, ref.bookingId))! } };
    },
  });
}

/** Runs before parsing: a non-staff caller learns nothing, not even that its request was malformed. */
export const staffOnly = (deps: ApiDeps) => async (principal: Principal) => void (await requireStaff(deps.staff, principal));

async function staffLine(deps: ApiDeps, principal: Principal, params: { bookingId: string; lineId: string }) {
  const staff = await requireStaff(deps.staff, principal);
  const ref = { bookingId: uuidOr404(params.bookingId), lineId: uuidOr404(params.lineId) };
  const booking = await deps.db('bookings').where({ id: ref.bookingId }).first('advertiser_id');
  if (!booking) throw notFound();
  requireAssigned(staff, booking.advertiser_id);
  return { staff, ref };
}

/** Workflow suppliers' figures are entered by staff as the supplier reports them: the deployment's delay applies. */
const workflowVerification = (config: ApiDeps['config']) => verificationSettingsFor(config, { key: 'manual', kind: 'workflow' });

export function fulfilmentRoutes(deps: ApiDeps): RouteDef[] {
  const { db } = deps;
  return [
    defineRoute({
      method: 'get',
      path: '/api/v1/internal/fulfilment/bookings',
      operationId: 'listFulfilmentBookings',
      summary: 'The staff work queue: bookings of clients assigned to you, oldest first, paged by an opaque cursor.',
      tags: ['staff'],
      access: 'bearer',
      scope: 'staff',
      query: FulfilmentQuerySchema,
      authorize: staffOnly(deps),
      responses: {
        200: {
          description: 'A page of bookings.',
          schema: z.object({ bookings: z.array(BookingSchema), nextCursor: z.string().min(1).nullable() }),
        },
        404: { description: 'Not staff.' },
      },
      async handler({ principal, query }) {
        const staff = await requireStaff(deps.staff, principal);
        return { status: 200, body: await listFulfilmentQueue(db, staff, query) };
      },
    }),
    lineOperation(deps, {
      name: 'delivery',
      summary:
        "Enter a workflow line's delivery as its supplier reported it: CSV text with date,impressions,clicks,completions,spend_minor, one row per day. Changed figures are kept as revisions with who entered them; a live line's spend follows.",
      body: DeliveryEntrySchema,
      run: (ref, body, who) =>
        enterDelivery(db, ref, body.csv, who.actor, deps.config.DELIVERY_PACING_TOLERANCE, workflowVerification(deps.config)),
    }),
    lineOperation(deps, {
      name: 'finalize',
      summary:
        "Mark a workflow line's month of delivery final (its supplier's figures as entered): the month closes and can be invoiced; a later entry for one of its days is kept as a discrepancy, not applied. Once the month's flight days are over.",
      body: z.strictObject({ period: PeriodSchema }),
      run: (ref, body, who) => finalizeMonthByStaff(db, ref, body.period, who.actor),
    }),
    lineOperation(deps, {
      name: 'uncertain',
      summary: "Record that a line's supplier outcome is uncertain: it goes to reconciliation-required.",
      body: UncertainSchema,
      run: (ref, body, who) => markUncertain(db, ref, body, who),
    }),
    lineOperation(deps, {
      name: 'claim',
      summary: 'Claim a workflow line: it is yours to work.',
      body: ClaimSchema,
      run: (ref, body, who) => claimLine(db, ref, body, who),
    }),
    lineOperation(deps, {
      name: 'start',
      summary: 'Start a claimed workflow line: opens its managed-booking attempt.',
      body: StartSchema,
      run: (ref, body, who) => startLine(db, ref, body, who),
    }),
    lineOperation(deps, {
      name: 'confirm',
      summary: "Confirm a started workflow line with the supplier's reference and evidence.",
      body: ConfirmSchema,
      run: (ref, body, who) => confirmLine(db, ref, body, who),
    }),
    lineOperation(deps, {
      name: 'reject',
      summary: 'Reject a workflow line, with the evidence why.',
      body: RejectSchema,
      run: (ref, body, who) => rejectLine(db, ref, body, who),
    }),
    lineOperation(deps, {
      name: 'follow-up',
      summary:
        "Record done, with evidence, what a supplier left to a person (e.g. ending a buy by hand at a seller that ignores cancels): the line's verification shows it, and the task leaves the queue.",
      body: FollowUpDoneSchema,
      run: (ref, body, who) => completeFollowUp(db, ref, body, who),
    }),
    lineOperation(deps, {
      name: 'resolve',
      summary: 'Resolve a reconciliation-required line from evidence: applied → confirmed, not-applied → rejected.',
      body: ResolveSchema,
      run: (ref, body, who) => resolveLine(db, ref, body, who),
    }),
  ];
}
