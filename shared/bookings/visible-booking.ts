import type { Knex } from 'knex';
import { notFound } from '../errors';
import { isUuid } from '../ids';
import type { Principal } from '../auth/principal';
import { inScope } from '../campaigns/campaign-store';
import { findBookingWithCampaignChannels } from './booking-store';
import type { Booking } from './booking-schemas';

/**
 * The caller's booking, or 404: another tenant's, one of a campaign outside the caller's
 * product, and an id that never existed all read the same.
 */
export async function visibleBooking(db: Knex, principal: Principal, id: string): Promise<Booking> {
  if (!isUuid(id)) throw notFound();
  const found = await findBookingWithCampaignChannels(db, id.toLowerCase(), principal.advertiserId);
  if (!found || !inScope(principal, { advertiserId: principal.advertiserId, channels: found.campaignChannels })) throw notFound();
  return found.booking;
}
