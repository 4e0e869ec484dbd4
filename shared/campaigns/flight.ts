import type { Knex } from 'knex';
import { Problem } from '../errors';
import { dateOnly } from '../dates';
import { nowFor } from '../workspaces/sandbox-clock';

/**
 * A flight that has ended cannot be bought: creating, approving or launching a campaign whose
 * end date is before today is 422 `flight_ended`. "Today" is the workspace's sandbox clock for a
 * sandbox campaign (so a test clock moved past the flight ends it too) and real time for a live
 * one. A flight that has started but not ended books its remaining days (docs/bookings.md).
 */
export async function refuseEndedFlight(
  db: Knex,
  campaign: { advertiserId: string; executionMode: 'sandbox' | 'live'; endDate: string },
): Promise<void> {
  const today = dateOnly(await nowFor(db, campaign.advertiserId, campaign.executionMode));
  if (campaign.endDate < today) {
    throw new Problem(
      422,
      'flight_ended',
      'Flight ended',
      `The flight ended on ${campaign.endDate}, before today (${today}${campaign.executionMode === 'sandbox' ? ', by the workspace sandbox clock' : ''}). Give the campaign an end date from today on.`,
      'correctable',
    );
  }
}
