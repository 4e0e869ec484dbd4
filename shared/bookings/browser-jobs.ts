import { isUuid } from '../ids';
import { randomUUID } from 'node:crypto';
import type { Knex } from 'knex';
import { z } from 'zod';
import { conflict, notFound, unprocessable } from '../errors';
import { findAdapter } from '../adapters/catalogue';
import type { StaffContext } from '../staff/staff-access';

export const BrowserJobSchema = z
  .strictObject({
    channelCampaignId: z.string().min(1).max(200),
    purpose: z.enum(['observe', 'prepare']),
    supplierUrl: z.url().max(2000),
    expectedSnapshotDigest: z.string().regex(/^[a-f0-9]{64}$/),
    readOnlyConfirmed: z.literal(true),
  })
  .meta({ id: 'BrowserJobRequest' });
export type BrowserJobRequest = z.infer<typeof BrowserJobSchema>;

export interface BrowserJob {
  id: string;
  purpose: 'observe' | 'prepare';
  supplierUrl: string;
  bookingId: string;
  lineId: string;
  channelCampaignId: string;
  status: 'recorded';
  /** Recording a browser job starts nothing: no virtual machine, no purchase. */
  queued: false;
  createdAt: string;
}

const isOfficial = (url: URL, hosts: readonly string[]) =>
  url.protocol === 'https:' && hosts.some((h) => url.hostname === h || url.hostname.endsWith(`.${h}`));

/**
 * Records a staff member's intent to use a supervised browser on a supplier site. Nothing is
 * queued or bought: observing is limited to the supplier's official public sources, and
 * preparing needs the member's own started computer-use line with its attempt in flight.
 */
export async function recordBrowserJob(
  db: Knex,
  staff: StaffContext,
  advertiserId: string,
  campaignId: string,
  body: BrowserJobRequest,
): Promise<BrowserJob> {
  if (!isUuid(campaignId)) throw notFound();
  const line = await db('booking_lines as l')
    .join('bookings as b', 'b.id', 'l.booking_id')
    .where({ 'b.advertiser_id': advertiserId, 'b.campaign_id': campaignId, 'l.channel_campaign_id': body.channelCampaignId })
    .first('l.*', 'b.snapshot_digest');
  if (!line) throw notFound();
  if (line.snapshot_digest !== body.expectedSnapshotDigest) {
    throw conflict("expectedSnapshotDigest does not match the booking's approved snapshot.", 'snapshot_mismatch');
  }
  const adapter = findAdapter(line.adapter_key);
  const url = new URL(body.supplierUrl);
  if (body.purpose === 'observe') {
    if (!isOfficial(url, adapter?.officialSourceHosts ?? [])) {
      throw unprocessable("Observation is limited to the supplier's official public sources.", 'unofficial_source');
    }
  } else {
    if (line.execution_method !== 'computer-use')
      throw unprocessable('Only computer-use lines can be prepared in a browser.', 'not_computer_use');
    if (line.claimed_by !== staff.userId) throw conflict('Only the operator who claimed this line can prepare it.', 'claim_required');
    const attempt = await db('supplier_attempts').where({ line_id: line.id, status: 'open', operation: 'managed-booking' }).first('id');
    if (line.status !== 'in-progress' || !attempt || attempt.id !== line.provider_attempt_id) {
      throw conflict('Preparing needs the started booking and its current in-flight attempt.', 'attempt_not_in_flight');
    }
    if (line.execution_mode === 'live') {
      // No commercial terms, automation permission or supplier authority are on record for live suppliers.
      throw unprocessable('Live suppliers have not granted automation permission for browser preparation.', 'automation_not_permitted');
    }
    if (!isOfficial(url, adapter?.officialSourceHosts ?? [])) {
      throw unprocessable("Preparation is limited to the supplier's own site.", 'unofficial_source');
    }
  }
  const id = randomUUID();
  const [row] = await db('browser_jobs')
    .insert({
      id,
      advertiser_id: advertiserId,
      campaign_id: campaignId,
      booking_id: line.booking_id,
      line_id: line.id,
      purpose: body.purpose,
      supplier_url: body.supplierUrl,
      requested_by: staff.userId,
    })
    .returning('*');
  return {
    id,
    purpose: body.purpose,
    supplierUrl: body.supplierUrl,
    bookingId: line.booking_id,
    lineId: line.id,
    channelCampaignId: body.channelCampaignId,
    status: 'recorded',
    queued: false,
    createdAt: (row.created_at as Date).toISOString(),
  };
}

export const BrowserJobEnvelope = z
  .object({
    browserJob: z.object({
      id: z.string().min(1),
      purpose: z.enum(['observe', 'prepare']),
      supplierUrl: z.string(),
      bookingId: z.string().min(1),
      lineId: z.string().min(1),
      channelCampaignId: z.string().min(1),
      status: z.literal('recorded'),
      queued: z.literal(false),
      createdAt: z.iso.datetime({ offset: true }),
    }),
  })
  .meta({ id: 'BrowserJobEnvelope' });
