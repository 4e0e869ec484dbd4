import type { Knex } from 'knex';
import { conflict } from '../errors';
import { firstPrepared } from '../db/knex';

/**
 * A booking holds its campaign until nothing of it can run again: it is closed when rejected,
 * or stopped with no line that may yet run (a paused line may resume, a staged one may be
 * enabled). SQL over `b`, a booking.
 */
export const BOOKING_CLOSED_SQL = `(b.status = 'rejected' or (b.status = 'stopped' and not exists (
  select 1 from booking_lines rl where rl.booking_id = b.id and rl.status = 'stopped' and rl.stop->>'kind' in ('pause', 'staged'))))`;

/**
 * The campaign's bookings that still hold it (at most one), as a query over `bookings as b`. Its
 * correlated check costs PostgreSQL more to plan than to run: callers send it prepared.
 */
export const openBookingsOf = (trx: Knex, campaignId: string) =>
  trx('bookings as b').where('b.campaign_id', campaignId).whereRaw(`not ${BOOKING_CLOSED_SQL}`);

/**
 * A campaign has at most one open booking (also a unique index on the statuses that are never
 * closed). A changed plan cannot be launched, or approved for launch, while it is open: its
 * lines are changed in flight (pause, resume, stop, amendments) instead.
 */
export async function refuseIfBooked(trx: Knex, campaignId: string): Promise<void> {
  const open = await firstPrepared<{ id: string; status: string }>(trx, openBookingsOf(trx, campaignId).select('b.id', 'b.status'));
  if (open) throw campaignBooked(open);
}

/** The 409 for a campaign whose open booking stands in the way. */
export function campaignBooked(open: { id: string; status: string }) {
  return conflict(
    `The campaign already has an open booking (${open.id}, ${open.status}). A changed plan cannot be approved or launched as a second booking while it is open: change its lines in flight (pause, resume, stop, amendments), or stop it and launch again.`,
    'campaign_booked',
    'terminal',
  );
}

/**
 * A running campaign's plan is not edited: replacing it would void the approval its booking was
 * launched from while the booking runs. The booking's lines are changed in flight instead.
 */
export async function refuseEditWhileBooked(trx: Knex, campaignId: string): Promise<void> {
  const open = await firstPrepared<{ id: string; status: string }>(trx, openBookingsOf(trx, campaignId).select('b.id', 'b.status'));
  if (!open) return;
  throw conflict(
    `The campaign is running (booking ${open.id}, ${open.status}), so its plan cannot be replaced. Change the running lines with an amendment instead: POST /api/v1/campaigns/${campaignId}/amendments with new line budgets or end date (or pause, resume or stop them). To book a different plan, stop the campaign first.`,
    'plan_locked_in_flight',
    'terminal',
  );
}
