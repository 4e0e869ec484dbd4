import { requireHuman } from '../http/guards';
import { actorOf } from '../../shared/auth/actor';
import { visibleBooking } from '../../shared/bookings/visible-booking';
import { BookingEnvelope } from '../../shared/bookings/booking-schemas';
import { findBookingById } from '../../shared/bookings/booking-store';
import { markUncertain, UncertainSchema } from '../../shared/bookings/lines/staff/staff-actions';
import type { ApiDeps } from '../deps';
import { defineRoute } from '../http/route';
import { IdParams, LineParams, uuidOr404 } from '../http/params';

/** The advertiser's views of its bookings, and the operator's uncertain call (spec 14). */
export function bookingRoutes(deps: ApiDeps) {
  const { db } = deps;
  return [
    defineRoute({
      method: 'get',
      path: '/api/v1/bookings/:id',
      operationId: 'getBooking',
      // Polled by agents until every line is definite.
      lean: true,
      summary: 'A booking with every line and event. Inspect each line: a booking is not live until its lines say so.',
      tags: ['bookings'],
      access: 'bearer',
      // visibleBooking applies the booking's scope rule with the read itself.
      scope: { resource: 'booking', param: 'id', inRead: true },
      params: IdParams,
      responses: { 200: { description: 'The booking.', schema: BookingEnvelope }, 404: { description: 'Not found.' } },
      async handler({ principal, params }) {
        return { status: 200, body: { booking: await visibleBooking(db, principal, params.id) } };
      },
    }),
    defineRoute({
      method: 'post',
      path: '/api/v1/operator/bookings/:bookingId/lines/:lineId/uncertain',
      operationId: 'operatorMarkLineUncertain',
      summary: "An operator records that a line's supplier outcome is uncertain: it goes to reconciliation-required.",
      tags: ['operators'],
      access: 'bearer',
      scope: { resource: 'booking', param: 'bookingId' },
      params: LineParams,
      body: UncertainSchema,
      responses: {
        200: { description: 'The booking after the change.', schema: BookingEnvelope },
        403: { description: 'Needs a human with operator:reconcile.' },
        404: { description: 'Not found.' },
        409: { description: 'Stale expectedVersion or a line that is not in progress.' },
      },
      authorize: requireHuman('record uncertain outcomes', 'operator:reconcile'),
      async handler({ principal, params, body }) {
        const { id: bookingId } = await visibleBooking(db, principal, params.bookingId);
        const lineId = uuidOr404(params.lineId);
        await markUncertain(db, { bookingId, lineId }, body, {
          actor: actorOf(principal),
          userId: principal.userId,
          staffId: null,
        });
        return { status: 200, body: { booking: (await findBookingById(db, bookingId))! } };
      },
    }),
  ];
}
