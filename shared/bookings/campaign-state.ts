import type { Knex } from 'knex';
import { CampaignSchema, type Campaign } from '../campaigns/campaign-schemas';
import { bookingState, CampaignStateSchema, flightOf, isOverdue, lineState, type CampaignState } from './derived-state';
import type { LineRow } from './booking-store';

/**
 * Each campaign's derived state (`derived-state.ts`): its latest booking's, read in two queries
 * for a page of campaigns; `not-launched` for one never launched.
 */
export async function campaignStates(db: Knex, advertiserId: string, campaignIds: string[], now = new Date()) {
  const states = new Map<string, CampaignState>(campaignIds.map((id) => [id, 'not-launched']));
  if (!campaignIds.length) return states;
  const bookings = (await db('bookings as b')
    .join('campaigns as c', 'c.id', 'b.campaign_id')
    .leftJoin('sandbox_clocks as sc', 'sc.advertiser_id', 'b.advertiser_id')
    .where('b.advertiser_id', advertiserId)
    .whereIn('b.campaign_id', campaignIds)
    .distinctOn('b.campaign_id')
    .orderBy([{ column: 'b.campaign_id' }, { column: 'b.submitted_at', order: 'desc' }, { column: 'b.id', order: 'desc' }])
    .select(
      'b.id',
      'b.campaign_id',
      'b.status',
      'b.execution_mode',
      'b.confirmation_due_at',
      'c.start_date',
      'c.end_date',
      'sc.offset_days as clock_offset_days',
    )) as Array<{
    id: string;
    campaign_id: string;
    status: string;
    execution_mode: 'sandbox' | 'live';
    confirmation_due_at: Date;
    start_date: string | Date;
    end_date: string | Date;
    clock_offset_days: unknown;
  }>;
  if (!bookings.length) return states;
  const lines = (await db('booking_lines')
    .whereIn(
      'booking_id',
      bookings.map((b) => b.id),
    )
    .select('booking_id', 'status', 'stop')) as Array<Pick<LineRow, 'booking_id' | 'status' | 'stop'>>;
  for (const b of bookings) {
    const flight = flightOf(b, now);
    const overdue = isOverdue(b.status, b.confirmation_due_at, now);
    const ls = lines.filter((l) => l.booking_id === b.id).map((l) => lineState(l, flight));
    states.set(b.campaign_id, bookingState(ls, { overdue, flightEnded: flight.ended }));
  }
  return states;
}

/** A campaign as read: the spec's fields, and beside them what it is doing. */
export const CampaignViewSchema = CampaignSchema.extend({ state: CampaignStateSchema }).meta({ id: 'CampaignView' });

export async function withStates(db: Knex, advertiserId: string, campaigns: Campaign[]) {
  const states = await campaignStates(
    db,
    advertiserId,
    campaigns.map((c) => c.id),
  );
  return campaigns.map((c) => ({ ...c, state: states.get(c.id) ?? ('not-launched' as const) }));
}
