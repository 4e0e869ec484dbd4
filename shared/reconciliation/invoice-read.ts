import type { Knex } from 'knex';
import { z } from 'zod';
import type { Principal } from '../auth/principal';
import { isUuid } from '../ids';
import { notFound } from '../errors';
import { invoiceLineView, invoiceView, InvoiceLineSchema, InvoiceSchema, PeriodSchema, SellerSchema } from './reconciliation-views';

export const InvoiceQuerySchema = z.strictObject({
  /** Only lines in this state (default: all). */
  status: z.enum(['approved', 'disputed', 'resolved']).optional(),
  /** Lines after this row number, up to `limit` (default 1000). */
  afterRow: z.coerce.number().int().min(0).optional(),
  limit: z.coerce.number().int().min(1).max(10_000).default(1000),
});
export const InvoiceEnvelope = z
  .object({ invoice: InvoiceSchema, lines: z.array(InvoiceLineSchema), nextAfterRow: z.number().int().nullable() })
  .meta({ id: 'InvoiceWithLines' });

export const InvoiceListQuerySchema = z.strictObject({
  period: PeriodSchema.optional(),
  seller: SellerSchema.optional(),
  status: z.enum(['approved', 'disputed', 'resolved']).optional(),
});
export const InvoiceListEnvelope = z.object({ invoices: z.array(InvoiceSchema) }).meta({ id: 'InvoiceList' });

async function countsOf(db: Knex, invoiceIds: string[]) {
  const rows = (await db('invoice_lines')
    .whereIn('invoice_id', invoiceIds)
    .groupBy('invoice_id', 'status')
    .select('invoice_id', 'status', db.raw('count(*)::int as n'))) as Array<{ invoice_id: string; status: string; n: number }>;
  const out = new Map<string, { approved: number; disputed: number; resolved: number }>();
  for (const r of rows) {
    const c = out.get(r.invoice_id) ?? { approved: 0, disputed: 0, resolved: 0 };
    c[r.status as 'approved'] = r.n;
    out.set(r.invoice_id, c);
  }
  return (id: string) => out.get(id) ?? { approved: 0, disputed: 0, resolved: 0 };
}

/** An invoice of the workspace with its lines (a page of them, in row order), or 404 like any unknown id. */
export async function readInvoice(db: Knex, p: Principal, id: string, query: Partial<z.infer<typeof InvoiceQuerySchema>>) {
  if (!isUuid(id)) throw notFound();
  const row = await db('invoices').where({ id: id.toLowerCase(), advertiser_id: p.advertiserId }).first();
  if (!row) throw notFound();
  const limit = query.limit ?? 1000;
  const lines = await db('invoice_lines')
    .where({ invoice_id: row.id })
    .modify((q) => (query.status ? q.where({ status: query.status }) : q))
    .modify((q) => (query.afterRow !== undefined ? q.where('row_number', '>', query.afterRow) : q))
    .orderBy('row_number')
    .limit(limit + 1);
  const more = lines.length > limit;
  const page = lines.slice(0, limit);
  const counts = await countsOf(db, [row.id]);
  return {
    invoice: invoiceView(row, counts(row.id)),
    lines: page.map(invoiceLineView),
    nextAfterRow: more ? Number(page.at(-1)!.row_number) : null,
  };
}

/** The workspace's invoices, newest first (at most 200). */
export async function listInvoices(db: Knex, p: Principal, q: z.infer<typeof InvoiceListQuerySchema>) {
  const rows: Array<Record<string, unknown> & { id: string }> = await db('invoices')
    .where({ advertiser_id: p.advertiserId })
    .modify((x) => (q.period ? x.where({ period: q.period }) : x))
    .modify((x) => (q.seller ? x.where({ adapter_key: q.seller }) : x))
    .modify((x) => (q.status ? x.where({ status: q.status }) : x))
    .orderBy([{ column: 'imported_at', order: 'desc' }, { column: 'id' }])
    .limit(200);
  const counts = await countsOf(
    db,
    rows.map((r) => r.id),
  );
  return { invoices: rows.map((r) => invoiceView(r, counts(r.id))) };
}
