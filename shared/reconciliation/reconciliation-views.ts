import { z } from 'zod';
import { toMinor } from '../db/knex';

/** A month, `YYYY-MM`, from 2000 on. */
export const PeriodSchema = z.string().regex(/^([2-9]\d{3})-(0[1-9]|1[0-2])$/, 'a month as YYYY-MM, from 2000-01');
/** A seller is named by its adapter key (`sandbox-ctv`, `manual`, `adcp-<key>`, …). */
export const SellerSchema = z.string().regex(/^[a-z][a-z0-9-]{0,99}$/, 'an adapter key, e.g. sandbox-ctv');

export const REMEDIES = ['credit', 'invoice_adjustment', 'additional_delivery', 'accepted'] as const;

const Money = z.number().int();
/** Variance of the invoice from our final figure: money, and basis points of ours (null when ours is 0). */
const Variance = { varianceMinor: Money, variancePercent: z.number().nullable() };

export const InvoiceLineSchema = z.object({
  id: z.uuid(),
  row: z.number().int(),
  lineId: z.uuid(),
  bookingId: z.uuid(),
  buyId: z.string().nullable(),
  packageId: z.string().nullable(),
  impressions: Money,
  amountMinor: Money,
  finalImpressions: Money,
  finalMinor: Money,
  ...Variance,
  impressionsVariancePercent: z.number().nullable(),
  status: z.enum(['approved', 'disputed', 'resolved']),
  version: z.number().int(),
  remedy: z.enum(REMEDIES).nullable(),
  remedyAmountMinor: Money.nullable(),
  reason: z.string().nullable(),
  resolvedBy: z.string().nullable(),
  resolvedAt: z.string().nullable(),
  /** For a disputed line: our final days, the seller's figures and the variance, ready to send. */
  evidence: z.unknown().nullable(),
});
export type InvoiceLineView = z.infer<typeof InvoiceLineSchema>;

export const InvoiceSchema = z.object({
  id: z.uuid(),
  invoiceNumber: z.string(),
  seller: z.string(),
  period: z.string(),
  currency: z.literal('GBP'),
  format: z.enum(['json', 'csv']),
  contentSha256: z.string(),
  status: z.enum(['approved', 'disputed', 'resolved']),
  version: z.number().int(),
  maxVariancePercent: z.number(),
  lineCount: z.number().int(),
  counts: z.object({ approved: z.number().int(), disputed: z.number().int(), resolved: z.number().int() }),
  invoicedMinor: Money,
  invoicedImpressions: Money,
  finalMinor: Money,
  finalImpressions: Money,
  ...Variance,
  importedBy: z.string(),
  importedAt: z.string(),
});
export type InvoiceView = z.infer<typeof InvoiceSchema>;

/** Percent with two decimals, from minor units; null when there is nothing to compare with. */
export const percentOf = (difference: number, base: number): number | null =>
  base === 0 ? (difference === 0 ? 0 : null) : Math.round((difference * 10_000) / base) / 100;

export function invoiceView(r: Record<string, unknown>, counts: { approved: number; disputed: number; resolved: number }): InvoiceView {
  const invoiced = toMinor(r.invoiced_minor as string);
  const final = toMinor(r.final_minor as string);
  return {
    id: String(r.id),
    invoiceNumber: String(r.invoice_number),
    seller: String(r.adapter_key),
    period: String(r.period),
    currency: 'GBP',
    format: r.format as 'json' | 'csv',
    contentSha256: String(r.content_sha256),
    status: r.status as InvoiceView['status'],
    version: Number(r.version),
    maxVariancePercent: Number(r.max_variance_percent),
    lineCount: Number(r.line_count),
    counts,
    invoicedMinor: invoiced,
    invoicedImpressions: toMinor(r.invoiced_impressions as string),
    finalMinor: final,
    finalImpressions: toMinor(r.final_impressions as string),
    varianceMinor: invoiced - final,
    variancePercent: percentOf(invoiced - final, final),
    importedBy: String(r.imported_by),
    importedAt: (r.imported_at as Date).toISOString(),
  };
}

export function invoiceLineView(r: Record<string, unknown>): InvoiceLineView {
  const amount = toMinor(r.amount_minor as string);
  const final = toMinor(r.final_minor as string);
  const impressions = toMinor(r.impressions as string);
  const finalImpressions = toMinor(r.final_impressions as string);
  return {
    id: String(r.id),
    row: Number(r.row_number),
    lineId: String(r.line_id),
    bookingId: String(r.booking_id),
    buyId: (r.buy_id as string | null) ?? null,
    packageId: (r.package_id as string | null) ?? null,
    impressions,
    amountMinor: amount,
    finalImpressions,
    finalMinor: final,
    varianceMinor: amount - final,
    variancePercent: percentOf(amount - final, final),
    impressionsVariancePercent: percentOf(impressions - finalImpressions, finalImpressions),
    status: r.status as InvoiceLineView['status'],
    version: Number(r.version),
    remedy: (r.remedy as InvoiceLineView['remedy']) ?? null,
    remedyAmountMinor:
      r.remedy_amount_minor === null || r.remedy_amount_minor === undefined ? null : toMinor(r.remedy_amount_minor as string),
    reason: (r.reason as string | null) ?? null,
    resolvedBy: (r.resolved_by as string | null) ?? null,
    resolvedAt: r.resolved_at ? (r.resolved_at as Date).toISOString() : null,
    evidence: r.evidence ?? null,
  };
}
