import type { Knex } from 'knex';
import { toMinor } from '../db/knex';
import { dateOnly } from '../dates';
import { digestOf } from '../digest';
import type { CreativeRef } from '../creatives/creative-schemas';

/**
 * A line as a browser job sees it: its booking's approved snapshot and what has since become of
 * the line's own part of it (an amendment's budget or end date, a revised creative). The terms'
 * digest binds a job to the line as it stood when the job was asked for: a job whose line's terms
 * changed before it ran is refused, not run against terms no one asked about.
 */
export interface BrowserJobLine {
  id: string;
  bookingId: string;
  advertiserId: string;
  campaignId: string;
  position: number;
  channelCampaignId: string;
  adapterKey: string;
  channel: string;
  executionMode: 'sandbox' | 'live';
  executionMethod: 'manual' | 'computer-use' | null;
  status: string;
  claimedBy: string | null;
  providerAttemptId: string | null;
  budgetMinor: number;
  creatives: CreativeRef[];
  campaignName: string;
  clientName: string;
  startDate: string;
  endDate: string;
  snapshotDigest: string;
  approvedSnapshot: unknown;
}

const LINE_COLUMNS = [
  'l.id',
  'l.booking_id',
  'l.position',
  'l.channel_campaign_id',
  'l.adapter_key',
  'l.channel',
  'l.execution_mode',
  'l.execution_method',
  'l.status',
  'l.claimed_by',
  'l.provider_attempt_id',
  'l.budget_minor',
  'l.creatives',
  'b.advertiser_id',
  'b.campaign_id',
  'b.snapshot_digest',
  'b.approved_snapshot',
  'c.name as campaign_name',
  'c.client_name',
  'c.start_date',
  'c.end_date',
];

/** Lines joined with their booking and campaign; the caller narrows it. */
export const browserJobLines = (db: Knex) =>
  db('booking_lines as l')
    .join('bookings as b', 'b.id', 'l.booking_id')
    .join('campaigns as c', 'c.id', 'b.campaign_id')
    .select(LINE_COLUMNS);

export function toBrowserJobLine(r: Record<string, unknown>): BrowserJobLine {
  return {
    id: r.id as string,
    bookingId: r.booking_id as string,
    advertiserId: r.advertiser_id as string,
    campaignId: r.campaign_id as string,
    position: Number(r.position),
    channelCampaignId: r.channel_campaign_id as string,
    adapterKey: r.adapter_key as string,
    channel: r.channel as string,
    executionMode: r.execution_mode as BrowserJobLine['executionMode'],
    executionMethod: r.execution_method as BrowserJobLine['executionMethod'],
    status: r.status as string,
    claimedBy: (r.claimed_by as string | null) ?? null,
    providerAttemptId: (r.provider_attempt_id as string | null) ?? null,
    budgetMinor: toMinor(r.budget_minor as string),
    creatives: (r.creatives as CreativeRef[] | null) ?? [],
    campaignName: r.campaign_name as string,
    clientName: r.client_name as string,
    startDate: dateOnly(r.start_date as string | Date),
    endDate: dateOnly(r.end_date as string | Date),
    snapshotDigest: r.snapshot_digest as string,
    approvedSnapshot: r.approved_snapshot,
  };
}

/** Lowercase hex SHA-256 of the line's terms as they stand now. */
export const lineTermsDigest = (l: BrowserJobLine): string =>
  digestOf({
    snapshotDigest: l.snapshotDigest,
    lineId: l.id,
    channelCampaignId: l.channelCampaignId,
    adapterKey: l.adapterKey,
    channel: l.channel,
    executionMode: l.executionMode,
    budgetMinor: l.budgetMinor,
    startDate: l.startDate,
    endDate: l.endDate,
    creatives: l.creatives.map((c) => ({ id: c.id, assetFingerprint: c.assetFingerprint })),
  });
