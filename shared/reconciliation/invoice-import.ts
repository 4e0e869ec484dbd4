import { randomUUID } from 'node:crypto';
import type { Knex } from 'knex';
import { findAdapter } from '../adapters/catalogue';
import type { Principal } from '../auth/principal';
import type { BillingTermsOfSeller } from '../config/seller-billing';
import { lastDayOfPeriod } from '../delivery/finality';
import { badRequest, conflict, type ProblemIssue } from '../errors';
import { recordEvent } from '../events/record';
import type { RawBody } from '../measurement/raw-body';
import { lineMonthFigures } from './final-figures';
import { parseInvoice, refuseRows, rowIssue, type InvoiceLineInput } from './invoice-parse';
import { readInvoice } from './invoice-read';
import { percentOf } from './reconciliation-views';

/** Bookings carry GBP only: an invoice in anything else is not ours to pay. */
const BOOKING_CURRENCY = 'GBP';
const CHUNK = 1000;

/** Beyond the seller's tolerance: |invoiced − final| > tolerance% of final (integers, exact); anything against nothing. */
export function beyondTolerance(invoicedMinor: number, finalMinor: number, maxVariancePercent: number): boolean {
  if (finalMinor === 0) return invoicedMinor !== 0;
  const difference = BigInt(Math.abs(invoicedMinor - finalMinor));
  return difference * 10_000n > BigInt(Math.round(maxVariancePercent * 100)) * BigInt(finalMinor);
}

const isUnique = (err: unknown, constraint: string) =>
  (err as { code?: string; constraint?: string }).code === '23505' && (err as { constraint?: string }).constraint === constraint;

interface Matched extends InvoiceLineInput {
  id: string;
  line: { id: string; booking_id: string };
  finalMinor: number;
  finalImpressions: number;
  disputed: boolean;
}

/**
 * Imports a seller's invoice for a month and matches each of its lines to our final delivery
 * (docs/billing.md, Invoices). Refused whole, with every row named and nothing stored, when a
 * line is unknown, in another currency, named twice or already invoiced, the invoice number is
 * already used, or the month is not final for a line. Each line within the seller's variance is
 * approved for payment; beyond it, disputed, with the evidence ready to send.
 */
export async function importInvoice(
  db: Knex,
  p: Principal,
  body: RawBody,
  contentType: string | undefined,
  termsOf: (adapterKey: string) => BillingTermsOfSeller,
) {
  const input = parseInvoice(body, contentType);
  const seller = findAdapter(input.seller);
  if (!seller) {
    throw badRequest(
      `${input.seller} is not a seller of this deployment (see GET /api/v1/adapters).`,
      [{ path: 'body.seller', message: 'unknown seller' }],
      'unknown_seller',
    );
  }
  const issues: ProblemIssue[] = [];
  for (const l of input.lines) {
    if (l.currency !== BOOKING_CURRENCY) {
      issues.push(rowIssue(l.row, `currency ${l.currency} is not the booking's (${BOOKING_CURRENCY})`, 'currency_mismatch', 'currency'));
    }
  }
  const refOf = (l: InvoiceLineInput) => (l.packageId ? `${l.buyId}/${l.packageId}` : l.buyId!);
  const ids = input.lines.filter((l) => l.lineId).map((l) => l.lineId!.toLowerCase());
  const refs = input.lines.filter((l) => l.buyId).map(refOf);
  const known = (await db('booking_lines')
    .where({ advertiser_id: p.advertiserId, adapter_key: seller.key })
    .where((w) => w.whereIn('id', ids).orWhereIn('provider_reference', refs))
    .select('id', 'booking_id', 'provider_reference')) as Array<{ id: string; booking_id: string; provider_reference: string | null }>;
  const byId = new Map(known.map((k) => [k.id, k]));
  const byRef = new Map(known.filter((k) => k.provider_reference).map((k) => [k.provider_reference!, k]));
  const seen = new Map<string, number>();
  const resolved: Array<InvoiceLineInput & { line: { id: string; booking_id: string } }> = [];
  for (const l of input.lines) {
    const line = l.lineId ? byId.get(l.lineId.toLowerCase()) : byRef.get(refOf(l));
    if (!line) {
      const named = l.lineId ? `line ${l.lineId}` : `buy ${refOf(l)}`;
      issues.push(
        rowIssue(
          l.row,
          `${named} is not a line of this workspace booked with ${seller.key}`,
          'unknown_line',
          l.lineId ? 'lineId' : 'buyId',
        ),
      );
      continue;
    }
    const earlier = seen.get(line.id);
    if (earlier !== undefined) {
      issues.push(rowIssue(l.row, `names the same line as row ${earlier}`, 'duplicate_line'));
      continue;
    }
    seen.set(line.id, l.row);
    resolved.push({ ...l, line });
  }
  if (issues.length) refuseRows(issues, 'problem(s) in the lines', 'invalid_rows');

  const duplicate = await db('invoices')
    .where({ advertiser_id: p.advertiserId, adapter_key: seller.key, invoice_number: input.invoiceNumber })
    .first('id');
  if (duplicate) throw conflict(`Invoice ${input.invoiceNumber} from ${seller.key} was already imported.`, 'duplicate_invoice');
  const lineIds = resolved.map((l) => l.line.id);
  const billed = (await db('invoice_lines as il')
    .join('invoices as i', 'i.id', 'il.invoice_id')
    .where({ 'il.period': input.period })
    .whereIn('il.line_id', lineIds)
    .select('il.line_id', 'i.invoice_number')) as Array<{ line_id: string; invoice_number: string }>;
  if (billed.length) {
    const on = new Map(billed.map((b) => [b.line_id, b.invoice_number]));
    const rows = resolved.filter((l) => on.has(l.line.id));
    refuseRows(
      rows.map((l) =>
        rowIssue(l.row, `this line's ${input.period} is already invoiced (invoice ${on.get(l.line.id)})`, 'already_invoiced'),
      ),
      'line(s) already invoiced for the month',
      'already_invoiced',
      'conflict',
    );
  }
  const figures = await lineMonthFigures(db, lineIds, input.period);
  const open = resolved.filter((l) => !figures.get(l.line.id)?.closed);
  if (open.length) {
    refuseRows(
      open.map((l) => rowIssue(l.row, `${input.period} is not final yet for line ${l.line.id}`, 'period_not_final')),
      `line(s) whose ${input.period} is not final yet`,
      'period_not_final',
      'conflict',
    );
  }

  const terms = termsOf(seller.key);
  const matched: Matched[] = resolved.map((l) => {
    const f = figures.get(l.line.id)!;
    return {
      ...l,
      id: randomUUID(),
      finalMinor: f.billableMinor,
      finalImpressions: f.finalImpressions,
      disputed: beyondTolerance(l.amountMinor, f.billableMinor, terms.maxVariancePercent),
    };
  });
  const evidence = await disputeEvidence(
    db,
    matched.filter((m) => m.disputed),
    input.period,
    terms.maxVariancePercent,
  );
  const total = (f: (m: Matched) => number) => matched.reduce((s, m) => s + f(m), 0);
  const disputed = matched.filter((m) => m.disputed).length;
  const invoiceId = randomUUID();
  try {
    await db.transaction(async (trx) => {
      await trx('invoices').insert({
        id: invoiceId,
        advertiser_id: p.advertiserId,
        adapter_key: seller.key,
        invoice_number: input.invoiceNumber,
        period: input.period,
        currency: BOOKING_CURRENCY,
        format: input.format,
        content_sha256: body.sha256,
        line_count: matched.length,
        invoiced_minor: total((m) => m.amountMinor),
        invoiced_impressions: total((m) => m.impressions),
        final_minor: total((m) => m.finalMinor),
        final_impressions: total((m) => m.finalImpressions),
        max_variance_percent: terms.maxVariancePercent,
        status: disputed ? 'disputed' : 'approved',
        imported_by: p.userId,
      });
      for (let i = 0; i < matched.length; i += CHUNK) {
        await trx('invoice_lines').insert(
          matched.slice(i, i + CHUNK).map((m) => ({
            id: m.id,
            invoice_id: invoiceId,
            advertiser_id: p.advertiserId,
            period: input.period,
            row_number: m.row,
            line_id: m.line.id,
            booking_id: m.line.booking_id,
            buy_id: m.buyId ?? null,
            package_id: m.packageId ?? null,
            impressions: m.impressions,
            amount_minor: m.amountMinor,
            final_impressions: m.finalImpressions,
            final_minor: m.finalMinor,
            status: m.disputed ? 'disputed' : 'approved',
            evidence: m.disputed ? JSON.stringify(evidence.get(m.id)) : null,
          })),
        );
      }
      const told = {
        invoiceId,
        invoiceNumber: input.invoiceNumber,
        seller: seller.key,
        period: input.period,
        lines: matched.length,
        disputedLines: disputed,
        invoicedMinor: total((m) => m.amountMinor),
        finalMinor: total((m) => m.finalMinor),
      };
      await recordEvent(trx, {
        workspaceId: p.advertiserId,
        type: 'invoice.imported',
        subjectId: invoiceId,
        subjectVersion: 1,
        body: told,
      });
      if (disputed) {
        await recordEvent(trx, {
          workspaceId: p.advertiserId,
          type: 'invoice.disputed',
          subjectId: invoiceId,
          subjectVersion: 1,
          body: told,
        });
      }
    });
  } catch (err) {
    // A concurrent import took the number, or a line's month, first.
    if (isUnique(err, 'invoices_advertiser_id_adapter_key_invoice_number_unique')) {
      throw conflict(`Invoice ${input.invoiceNumber} from ${seller.key} was already imported.`, 'duplicate_invoice');
    }
    if (isUnique(err, 'invoice_lines_billed_once')) throw conflict(`A line's ${input.period} was invoiced meanwhile.`, 'already_invoiced');
    throw err;
  }
  return readInvoice(db, p, invoiceId, {});
}

/**
 * What a dispute sends the seller: our final days of the line in the month, the seller's figures,
 * the variance and the tolerance it broke. One read for every disputed line.
 */
async function disputeEvidence(db: Knex, lines: Matched[], period: string, maxVariancePercent: number) {
  const out = new Map<string, unknown>();
  if (!lines.length) return out;
  const days = (await db('delivery_days')
    .whereIn(
      'line_id',
      lines.map((l) => l.line.id),
    )
    .whereBetween('day', [`${period}-01`, lastDayOfPeriod(period)])
    .orderBy(['line_id', 'day'])
    .select('line_id', 'day', 'impressions', 'spend_minor', 'final_source')) as Array<Record<string, string>>;
  const byLine = new Map<string, Array<{ date: string; impressions: number; spendMinor: number; final: string }>>();
  for (const d of days) {
    const list = byLine.get(d.line_id!) ?? [];
    list.push({ date: d.day!, impressions: Number(d.impressions), spendMinor: Number(d.spend_minor), final: d.final_source! });
    byLine.set(d.line_id!, list);
  }
  for (const l of lines) {
    out.set(l.id, {
      lineId: l.line.id,
      period,
      ours: { finalMinor: l.finalMinor, finalImpressions: l.finalImpressions, days: byLine.get(l.line.id) ?? [] },
      seller: { amountMinor: l.amountMinor, impressions: l.impressions, row: l.row },
      variance: { minor: l.amountMinor - l.finalMinor, percent: percentOf(l.amountMinor - l.finalMinor, l.finalMinor) },
      maxVariancePercent,
    });
  }
  return out;
}
