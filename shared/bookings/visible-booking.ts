import type { Knex } from 'knex';
import { notFound } from '../errors';
import { isUuid } from '../ids';
import type { Principal } from '../auth/principal';
import { bookingChannels } from '../access/resource-scope';
import { withinScope } from '../auth/scope';
import { findBookingWithCampaignChannels } from './booking-store';
import type { Booking } from './booking-schemas';

/**
 * The caller's booking, or 404: another tenant's, one outside the caller's product (its
 * campaign's and lines' channels, the rule `requireInScope` applies to bookings), and an id
 * that never existed all read the same. One round trip: the booking's read route leans on it.
 */
export async function visibleBooking(db: Knex, principal: Principal, id: string): Promise<Booking> {
  if (!isUuid(id)) throw notFound();
  const found = await findBookingWithCampaignChannels(db, id.toLowerCase(), principal.advertiserId);
  if (!found) throw notFound();
  const channels = bookingChannels(
    found.campaignChannels,
    found.booking.lines.map((l) => l.channel),
  );
  if (!withinScope(principal, channels)) throw notFound();
  return found.booking;
}
