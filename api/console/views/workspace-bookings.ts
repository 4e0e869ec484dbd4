import type { Knex } from 'knex';
import { bookingQuery, type BookingRow } from '../../../shared/bookings/booking-store';
import type { ConsoleRequest } from '../context';

/**
 * The workspace's bookings, newest first, campaign and client named: the campaigns come from
 * the API's own list (the caller's product scope decides which), their bookings from the store.
 */
export async function workspaceBookings(r: ConsoleRequest, db: Knex): Promise<BookingRow[]> {
  const { campaigns } = (await r.call('listCampaigns', { limit: 100 })) as { campaigns: Array<{ id: string }> };
  if (!campaigns.length) return [];
  return (await bookingQuery(db)
    .whereIn(
      'b.campaign_id',
      campaigns.map((x) => x.id),
    )
    .andWhere('b.advertiser_id', r.principal.advertiserId)
    .orderBy([
      { column: 'b.submitted_at', order: 'desc' },
      { column: 'b.id', order: 'desc' },
    ])
    .limit(50)) as BookingRow[];
}
