import type { Knex } from 'knex';
import { z } from 'zod';
import { actorOf } from '../auth/actor';
import type { Principal } from '../auth/principal';
import { toMinor } from '../db/knex';
import { conflict, notFound } from '../errors';
import { isUuid } from '../ids';

const Figures = z.object({
  impressions: z.number().int(),
  clicks: z.number().int(),
  completions: z.number().int(),
  spendMinor: z.number().int(),
});
export const DiscrepancySchema = z.object({
  id: z.uuid(),
  lineId: z.uuid(),
  bookingId: z.uuid(),
  seller: z.string(),
  day: z.string(),
  /** The figure that stands. */
  final: Figures,
  /** What the seller (or staff) reported after the day was final: kept, never applied. */
  reported: Figures,
  reportedBy: z.enum(['supplier', 'staff']),
  reportedAsOf: z.string(),
  detectedAt: z.string(),
  status: z.enum(['open', 'acknowledged']),
  acknowledgedBy: z.string().nullable(),
  acknowledgedAt: z.string().nullable(),
  note: z.string().nullable(),
});
export type Discrepancy = z.infer<typeof DiscrepancySchema>;

export const DiscrepancyQuerySchema = z.strictObject({ status: z.enum(['open', 'acknowledged']).optional() });
export const DiscrepancyListEnvelope = z.object({ discrepancies: z.array(DiscrepancySchema) }).meta({ id: 'DiscrepancyList' });
export const AcknowledgeSchema = z.strictObject({ note: z.string().min(3).max(2000) });

const figures = (r: Record<string, unknown>, side: 'final' | 'reported') => ({
  impressions: toMinor(r[`${side}_impressions`] as string),
  clicks: toMinor(r[`${side}_clicks`] as string),
  completions: toMinor(r[`${side}_completions`] as string),
  spendMinor: toMinor(r[`${side}_spend_minor`] as string),
});

export function discrepancyView(r: Record<string, unknown>): Discrepancy {
  return {
    id: String(r.id),
    lineId: String(r.line_id),
    bookingId: String(r.booking_id),
    seller: String(r.adapter_key),
    day: String(r.day),
    final: figures(r, 'final'),
    reported: figures(r, 'reported'),
    reportedBy: r.reported_by as Discrepancy['reportedBy'],
    reportedAsOf: (r.reported_as_of as Date).toISOString(),
    detectedAt: (r.detected_at as Date).toISOString(),
    status: r.status as Discrepancy['status'],
    acknowledgedBy: (r.acknowledged_by as string | null) ?? null,
    acknowledgedAt: r.acknowledged_at ? (r.acknowledged_at as Date).toISOString() : null,
    note: (r.note as string | null) ?? null,
  };
}

/** The workspace's restated final days, newest first (at most 500). */
export async function listDiscrepancies(db: Knex, p: Principal, q: z.infer<typeof DiscrepancyQuerySchema>) {
  const rows = await db('delivery_discrepancies')
    .where({ advertiser_id: p.advertiserId })
    .modify((x) => (q.status ? x.where({ status: q.status }) : x))
    .orderBy([{ column: 'detected_at', order: 'desc' }, { column: 'id' }])
    .limit(500);
  return { discrepancies: rows.map(discrepancyView) };
}

/**
 * A person takes a discrepancy up (with the seller, in an invoice dispute) and says so: it leaves
 * the needs-attention list with their note. The final figure still stands. Once.
 */
export async function acknowledgeDiscrepancy(db: Knex, p: Principal, id: string, note: string): Promise<{ discrepancy: Discrepancy }> {
  if (!isUuid(id)) throw notFound();
  const row = await db('delivery_discrepancies').where({ id: id.toLowerCase(), advertiser_id: p.advertiserId }).first('status');
  if (!row) throw notFound();
  const [updated] = await db('delivery_discrepancies')
    .where({ id: id.toLowerCase(), advertiser_id: p.advertiserId, status: 'open' })
    .update({ status: 'acknowledged', acknowledged_by: actorOf(p).actorId, acknowledged_at: db.fn.now(), note })
    .returning('*');
  if (!updated) throw conflict('This discrepancy was already acknowledged.', 'already_acknowledged');
  return { discrepancy: discrepancyView(updated) };
}
