import type { Knex } from 'knex';
import type { Channel } from '../auth/products';
import { toMinor } from '../db/knex';

/**
 * Flightdeck's sandbox exposure model (docs/audiences.md). A campaign has exposed people on
 * a channel when one of its bookings has a CONFIRMED line there; every 10 minor units of a
 * confirmed line's budget stand for one exposed identity. A cohort's estimated size is the
 * identities on its exposedOn channels minus those on its notExposedOn channels, never below 0.
 */
export const MINOR_UNITS_PER_IDENTITY = 10;

export interface Exposure {
  /** Identities per channel, for the channels with at least one confirmed line. */
  byChannel: Partial<Record<Channel, number>>;
}

export async function campaignExposure(db: Knex, campaignId: string): Promise<Exposure> {
  const lines = (await db('booking_lines as l')
    .join('bookings as b', 'b.id', 'l.booking_id')
    .where({ 'b.campaign_id': campaignId, 'l.status': 'confirmed' })
    .select('l.channel', 'l.budget_minor')) as Array<{ channel: Channel; budget_minor: string }>;
  const byChannel: Partial<Record<Channel, number>> = {};
  for (const line of lines) {
    byChannel[line.channel] = (byChannel[line.channel] ?? 0) + Math.floor(toMinor(line.budget_minor) / MINOR_UNITS_PER_IDENTITY);
  }
  return { byChannel };
}

export const isExposedOn = (exposure: Exposure, channels: readonly Channel[]) => channels.some((c) => c in exposure.byChannel);

export function estimatedSize(exposure: Exposure, exposedOn: readonly Channel[], notExposedOn: readonly Channel[]): number {
  const sum = (channels: readonly Channel[]) => channels.reduce((s, c) => s + (exposure.byChannel[c] ?? 0), 0);
  return Math.max(0, sum(exposedOn) - sum(notExposedOn));
}
