import type { Knex } from 'knex';
import { conflict } from '../errors';

/** Booking statuses that no longer hold the campaign: a new launch may follow them. */
export const CLOSED_BOOKING_STATUSES = ['rejected', 'stopped'] as const;

/**
 * A campaign has at most one open booking (also a unique index). A changed plan cannot be
 * launched, or approved for launch, while it is open: amending a live booking is not
 * supported, so it is refused with a 409 that says what to do.
 */
export async function refuseIfBooked(trx: Knex, campaignId: string): Promise<void> {
  const open = await trx('bookings').where({ campaign_id: campaignId }).whereNotIn('status', CLOSED_BOOKING_STATUSES).first('id', 'status');
  if (open) throw campaignBooked(open);
}

/** The 409 for a campaign whose open booking stands in the way. */
export function campaignBooked(open: { id: string; status: string }) {
  return conflict(
    `The campaign already has an open booking (${open.id}, ${open.status}). A changed plan cannot be approved or launched as a second booking while it is open; wait until it is rejected or stopped.`,
    'campaign_booked',
    'terminal',
  );
}
