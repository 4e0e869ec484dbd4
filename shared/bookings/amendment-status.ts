import type { Knex } from 'knex';
import type { Actor } from '../auth/actor';
import { dateOnly } from '../dates';
import { recordEvent } from '../events/record';
import { appendEvent } from './booking-events';
import type { LineOperationStatus } from './lines/operation-store';

export const AMENDMENT_STATUSES = ['in-flight', 'applied', 'partially-applied', 'refused', 'reconciliation-required'] as const;
export type AmendmentStatus = (typeof AMENDMENT_STATUSES)[number];

/** An amendment stands where its lines' budget changes stand, taken together. */
export function amendmentStatusOf(lines: readonly LineOperationStatus[]): AmendmentStatus {
  if (lines.some((s) => s === 'requested' || s === 'in-flight')) return 'in-flight';
  if (lines.some((s) => s === 'reconciliation-required')) return 'reconciliation-required';
  if (lines.every((s) => s === 'applied')) return 'applied';
  if (lines.every((s) => s === 'refused')) return 'refused';
  return 'partially-applied';
}

/**
 * One of an amendment's line changes moved: the amendment's status follows. When every line took
 * it and it moved the flight's end, the campaign now ends then (a flight ends for all its lines
 * together; a partial amendment leaves the end date as it was, and says so in its status).
 */
export async function amendmentLineSettled(trx: Knex, amendmentId: string, actor: Actor): Promise<AmendmentStatus> {
  const amendment = await trx('booking_amendments').where({ id: amendmentId }).forUpdate().first();
  const lines = (await trx('line_operations').where({ amendment_id: amendmentId }).pluck('status')) as LineOperationStatus[];
  const status = amendmentStatusOf(lines);
  if (status === amendment.status) return status;
  await trx('booking_amendments').where({ id: amendmentId }).update({ status, updated_at: trx.fn.now() });
  if (status === 'applied' && amendment.end_date_to) {
    await trx('campaigns').where({ id: amendment.campaign_id }).update({ end_date: amendment.end_date_to, updated_at: trx.fn.now() });
  }
  await appendEvent(trx, {
    bookingId: amendment.booking_id,
    action: `amendment.${status}`,
    actor,
    detail: {
      amendmentId,
      ...(status === 'applied' && amendment.end_date_to ? { endDate: dateOnly(amendment.end_date_to) } : {}),
    },
  });
  if (status === 'applied' || status === 'partially-applied' || status === 'refused') {
    await recordEvent(trx, {
      workspaceId: amendment.advertiser_id,
      type: 'amendment.completed',
      subjectId: amendmentId,
      subjectVersion: 1,
      body: { amendmentId, bookingId: amendment.booking_id, campaignId: amendment.campaign_id, status },
    });
  }
  return status;
}
