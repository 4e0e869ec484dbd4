import { parse as parseCsv } from 'csv-parse/sync';
import { z } from 'zod';
import { badRequest, Problem, type ProblemIssue } from '../errors';
import { decodeUtf8, mediaTypeOf, type RawBody } from '../measurement/raw-body';
import { PeriodSchema, SellerSchema } from './reconciliation-views';

/** An invoice has 1..10,000 lines; 10,000 JSON or CSV lines fit well within this. */
export const MAX_INVOICE_LINES = 10_000;
export const INVOICE_BODY_LIMIT_BYTES = 4 * 1024 * 1024;
const MAX_REPORTED_ISSUES = 200;

/** The CSV layout (docs/billing.md): one row per invoice line, the invoice's own fields repeated on each. */
export const INVOICE_CSV_COLUMNS = [
  'invoice_number',
  'seller',
  'period',
  'currency',
  'line_id',
  'buy_id',
  'package_id',
  'impressions',
  'amount_minor',
] as const;

const Count = z.number().int().min(0).max(1_000_000_000_000);
const Currency = z.string().regex(/^[A-Z]{3}$/, 'an ISO 4217 code such as GBP');

export const InvoiceLineInputSchema = z
  .strictObject({
    /** Our line id, as the statement shows it. */
    lineId: z.uuid().optional(),
    /** Or the seller's own buy id (its media buy, order or booking reference) and package within it. */
    buyId: z.string().min(1).max(200).optional(),
    packageId: z.string().min(1).max(200).optional(),
    impressions: Count,
    amountMinor: Count,
    /** Defaults to the invoice's currency. */
    currency: Currency.optional(),
  })
  .refine((l) => (l.lineId === undefined) !== (l.buyId === undefined), { message: 'name either lineId or buyId (with packageId)' })
  .refine((l) => l.packageId === undefined || l.buyId !== undefined, { message: 'packageId goes with buyId', path: ['packageId'] });

export const InvoiceBodySchema = z
  .strictObject({
    invoiceNumber: z.string().min(1).max(100),
    seller: SellerSchema,
    period: PeriodSchema,
    currency: Currency,
    lines: z.array(z.unknown()).min(1).max(MAX_INVOICE_LINES),
  })
  .meta({ id: 'InvoiceImport' });

export type InvoiceLineInput = z.infer<typeof InvoiceLineInputSchema> & { row: number; currency: string };
export interface InvoiceInput {
  invoiceNumber: string;
  seller: string;
  period: string;
  currency: string;
  format: 'json' | 'csv';
  lines: InvoiceLineInput[];
}

/** Problems found in the rows: a 400 naming each (the first 200), nothing stored. */
export function refuseRows(issues: ProblemIssue[], what: string, code: string, status: 'bad' | 'conflict' = 'bad'): never {
  const shown = issues.slice(0, MAX_REPORTED_ISSUES);
  const more = issues.length > shown.length ? ` (the first ${shown.length} are listed)` : '';
  const detail = `${issues.length} ${what}${more}; nothing was imported.`;
  throw status === 'conflict' ? new Problem(409, code, 'Conflict', detail, 'correctable', shown) : badRequest(detail, shown, code);
}

export const rowIssue = (row: number, message: string, code: string, field?: string): ProblemIssue => ({
  path: `body.lines.${row - 1}${field ? `.${field}` : ''}`,
  message: `row ${row}: ${message}`,
  code,
});

function csvInvoice(text: string): Omit<InvoiceInput, 'lines'> & { lines: Array<{ row: number; value: unknown }> } {
  let records: Array<Record<string, string>>;
  try {
    records = parseCsv(text, { columns: true, bom: true, trim: true, skip_empty_lines: true }) as never;
  } catch (err) {
    const line = (err as { lines?: number }).lines;
    throw badRequest(`The CSV could not be parsed${line ? ` at line ${line}` : ''}: ${(err as Error).message}`, undefined, 'malformed_csv');
  }
  const header = Object.keys(records[0] ?? {});
  const first = text.replace(/^\uFEFF/, '').split(/\r?\n/, 1)[0] ?? '';
  const named = header.length ? header : first.split(',').map((h) => h.trim());
  if (named.length !== INVOICE_CSV_COLUMNS.length || !INVOICE_CSV_COLUMNS.every((c) => named.includes(c))) {
    throw badRequest(`The CSV header must name exactly the columns ${INVOICE_CSV_COLUMNS.join(', ')}.`, undefined, 'malformed_csv');
  }
  if (records.length === 0 || records.length > MAX_INVOICE_LINES) {
    throw badRequest(`An invoice has 1..${MAX_INVOICE_LINES} lines; this CSV has ${records.length}.`, undefined, 'row_count_out_of_range');
  }
  const head = records[0]!;
  const issues: ProblemIssue[] = [];
  records.forEach((r, i) => {
    for (const k of ['invoice_number', 'seller', 'period', 'currency'] as const) {
      if (r[k] !== head[k]) issues.push(rowIssue(i + 1, `${k} differs from the first row's (${head[k]})`, 'inconsistent_invoice', k));
    }
  });
  if (issues.length) refuseRows(issues, 'row(s) disagree on the invoice', 'invalid_rows');
  // CSV carries text: a count is plain digits or it is reported as not a number.
  const count = (v: string | undefined) => (v !== undefined && /^\d{1,15}$/.test(v) ? Number(v) : v);
  const opt = (v: string | undefined) => (v === undefined || v === '' ? undefined : v);
  return {
    invoiceNumber: head.invoice_number!,
    seller: head.seller!,
    period: head.period!,
    currency: head.currency!,
    format: 'csv',
    lines: records.map((r, i) => ({
      row: i + 1,
      value: Object.fromEntries(
        Object.entries({
          lineId: opt(r.line_id),
          buyId: opt(r.buy_id),
          packageId: opt(r.package_id),
          impressions: count(r.impressions),
          amountMinor: count(r.amount_minor),
        }).filter(([, v]) => v !== undefined),
      ),
    })),
  };
}

/** A seller's invoice from a JSON or CSV body, each line checked; a 400 names every bad row. Pure: nothing is stored. */
export function parseInvoice(body: RawBody, contentType: string | undefined): InvoiceInput {
  const { type, charset } = mediaTypeOf(contentType);
  if (charset && charset !== 'utf-8' && charset !== 'utf8') {
    throw badRequest(`Send the invoice as UTF-8, not ${charset}.`, undefined, 'unsupported_encoding');
  }
  const text = decodeUtf8(body.bytes);
  let head: Omit<InvoiceInput, 'lines'>;
  let raw: Array<{ row: number; value: unknown }>;
  if (type === 'application/json') {
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      throw badRequest('The request body is not valid JSON.', undefined, 'malformed_json');
    }
    const envelope = InvoiceBodySchema.safeParse(parsed);
    if (!envelope.success) {
      const errors = envelope.error.issues.map((i) => ({
        path: ['body', ...i.path.map(String)].join('.'),
        message: i.message,
        code: i.code,
      }));
      throw badRequest(`The invoice is not valid (${MAX_INVOICE_LINES} lines at most).`, errors);
    }
    const { lines, ...rest } = envelope.data;
    head = { ...rest, format: 'json' };
    raw = lines.map((value, i) => ({ row: i + 1, value }));
  } else if (type === 'text/csv') {
    const csv = csvInvoice(text);
    const { lines, ...rest } = csv;
    const checked = InvoiceBodySchema.omit({ lines: true }).safeParse({
      invoiceNumber: rest.invoiceNumber,
      seller: rest.seller,
      period: rest.period,
      currency: rest.currency,
    });
    if (!checked.success) {
      const errors = checked.error.issues.map((i) => ({
        path: ['body', ...i.path.map(String)].join('.'),
        message: i.message,
        code: i.code,
      }));
      throw badRequest('The invoice columns are not valid.', errors);
    }
    head = { ...checked.data, format: 'csv' };
    raw = lines;
  } else {
    throw badRequest(`Send the invoice as application/json or text/csv, not ${type || '(none)'}.`, undefined, 'unsupported_media_type');
  }
  const issues: ProblemIssue[] = [];
  const lines: InvoiceLineInput[] = [];
  for (const { row, value } of raw) {
    const parsed = InvoiceLineInputSchema.safeParse(value);
    if (!parsed.success) {
      for (const i of parsed.error.issues) issues.push(rowIssue(row, i.message, i.code, i.path.map(String).join('.') || undefined));
      continue;
    }
    const currency = parsed.data.currency ?? head.currency;
    lines.push({ ...parsed.data, row, currency });
  }
  if (issues.length) refuseRows(issues, 'problem(s) in the lines', 'invalid_rows');
  return { ...head, lines };
}
