import { randomUUID } from 'node:crypto';
import type { Knex } from 'knex';
import { parse as parseCsv } from 'csv-parse/sync';
import { z } from 'zod';
import type { GeoPanel } from './geo-lift';
import { badRequest, notFound, type ProblemIssue } from '../errors';
import { isUuid } from '../ids';
import type { Principal } from '../auth/principal';
import { findCampaign } from '../campaigns/campaign-store';
import type { Campaign } from '../campaigns/campaign-schemas';
import type { Market } from '../config/measurement-settings';
import { decodeUtf8, mediaTypeOf, type RawBody } from './raw-body';

export const OUTCOME_METRICS = ['conversions', 'revenueMinor', 'visits', 'signups', 'leads', 'storeVisits'] as const;
export const MAX_OUTCOME_ROWS = 10_000;
/** 10,000 CSV or JSON rows fit well within this. */
export const OUTCOMES_BODY_LIMIT_BYTES = 2 * 1024 * 1024;
const MAX_REPORTED_ISSUES = 200;
const CSV_COLUMNS = ['date', 'market', 'metric', 'value'];

/** A real calendar day, YYYY-MM-DD. */
export const CalendarDate = z
  .string()
  .regex(/^\d{4}-\d{2}-\d{2}$/)
  .refine(
    (d) => !Number.isNaN(Date.parse(`${d}T00:00:00Z`)) && new Date(`${d}T00:00:00Z`).toISOString().startsWith(d),
    'not a calendar date',
  );

function rowSchema(markets: readonly Market[]) {
  const ids = new Set(markets.map((m) => m.id));
  return z
    .strictObject({
      date: CalendarDate,
      market: z.string().refine((m) => ids.has(m), 'not a configured market (see GET /api/v1/measurement/markets)'),
      metric: z.enum(OUTCOME_METRICS),
      value: z.number().min(0).max(1e12),
    })
    .refine((r) => r.metric !== 'revenueMinor' || Number.isInteger(r.value), {
      message: 'revenueMinor is in minor units: an integer',
      path: ['value'],
    });
}
export type OutcomeRow = z.infer<ReturnType<typeof rowSchema>>;

const JsonEnvelope = z.strictObject({ rows: z.array(z.unknown()).min(1).max(MAX_OUTCOME_ROWS) });

/** Rows as sent, each with the row number and (for CSV) the line a person can find it on. */
interface RawRow {
  value: unknown;
  line?: number;
}

function csvRows(text: string): RawRow[] {
  let records: Array<{ record: Record<string, string>; info: { lines: number } }>;
  try {
    records = parseCsv(text, { columns: true, bom: true, trim: true, skip_empty_lines: true, info: true }) as never;
  } catch (err) {
    const line = (err as { lines?: number }).lines;
    throw badRequest(`The CSV could not be parsed${line ? ` at line ${line}` : ''}: ${(err as Error).message}`, undefined, 'malformed_csv');
  }
  const header = text
    .replace(/^\uFEFF/, '')
    .split(/\r?\n/, 1)[0]!
    .split(',')
    .map((h) => h.trim().replace(/^"|"$/g, ''));
  if (header.length !== CSV_COLUMNS.length || !CSV_COLUMNS.every((c) => header.includes(c))) {
    throw badRequest(`The CSV header must name exactly the columns ${CSV_COLUMNS.join(', ')}.`, undefined, 'malformed_csv');
  }
  return records.map(({ record, info }) => {
    // CSV carries text: a value is a plain decimal number or it is reported as not a number.
    const raw = record.value ?? '';
    const value = /^-?\d+(\.\d+)?$/.test(raw) ? Number(raw) : raw;
    return { value: { ...record, value }, line: info.lines };
  });
}

/** Parses a JSON or CSV body into rows, or a 400 listing every bad row by number. Pure: nothing is stored. */
export function parseOutcomes(
  body: RawBody,
  contentType: string | undefined,
  markets: readonly Market[],
): { format: 'json' | 'csv'; rows: OutcomeRow[] } {
  const { type, charset } = mediaTypeOf(contentType);
  if (charset && charset !== 'utf-8' && charset !== 'utf8') {
    throw badRequest(`Send the body as UTF-8, not ${charset}.`, undefined, 'unsupported_encoding');
  }
  let format: 'json' | 'csv';
  let raw: RawRow[];
  const text = decodeUtf8(body.bytes);
  if (type === 'application/json') {
    format = 'json';
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      throw badRequest('The request body is not valid JSON.', undefined, 'malformed_json');
    }
    const envelope = JsonEnvelope.safeParse(parsed);
    if (!envelope.success) {
      const errors = envelope.error.issues.map((i) => ({
        path: ['body', ...i.path.map(String)].join('.'),
        message: i.message,
        code: i.code,
      }));
      throw badRequest(`The body must be { "rows": [...] } with 1..${MAX_OUTCOME_ROWS} rows.`, errors);
    }
    raw = envelope.data.rows.map((value) => ({ value }));
  } else if (type === 'text/csv') {
    format = 'csv';
    raw = csvRows(text);
    if (raw.length === 0 || raw.length > MAX_OUTCOME_ROWS) {
      throw badRequest(`The CSV must have 1..${MAX_OUTCOME_ROWS} rows; it has ${raw.length}.`, undefined, 'row_count_out_of_range');
    }
  } else {
    throw badRequest(`Send outcomes as application/json or text/csv, not ${type || '(none)'}.`, undefined, 'unsupported_media_type');
  }

  const schema = rowSchema(markets);
  const issues: ProblemIssue[] = [];
  const rows: OutcomeRow[] = [];
  const seen = new Map<string, number>();
  raw.forEach((r, index) => {
    const where = `row ${index + 1}${r.line ? ` (line ${r.line})` : ''}`;
    const parsed = schema.safeParse(r.value);
    if (!parsed.success) {
      for (const i of parsed.error.issues) {
        issues.push({
          path: ['body', 'rows', String(index), ...i.path.map(String)].join('.'),
          message: `${where}: ${i.message}`,
          code: i.code,
        });
      }
      return;
    }
    const key = `${parsed.data.date}|${parsed.data.market}|${parsed.data.metric}`;
    const first = seen.get(key);
    if (first !== undefined) {
      issues.push({
        path: `body.rows.${index}`,
        message: `${where}: repeats row ${first + 1} (same date, market and metric)`,
        code: 'duplicate_row',
      });
      return;
    }
    seen.set(key, index);
    rows.push(parsed.data);
  });
  if (issues.length) {
    const shown = issues.slice(0, MAX_REPORTED_ISSUES);
    const more = issues.length > shown.length ? ` (the first ${shown.length} are listed)` : '';
    throw badRequest(`${issues.length} problem(s) in the rows${more}; nothing was imported.`, shown, 'invalid_rows');
  }
  return { format, rows };
}

export async function requireCampaign(db: Knex, p: Principal, id: string): Promise<Campaign> {
  if (!isUuid(id)) throw notFound();
  const campaign = await findCampaign(db, p, id);
  if (!campaign) throw notFound();
  return campaign;
}

/**
 * Orders outcome imports and geo-lift registrations of one campaign: imports share the lock, a
 * registration takes it alone. A registration's "no exposure data is stored yet" then holds
 * until it commits: no import can land between its check and its commit.
 */
export async function lockCampaignOutcomes(trx: Knex.Transaction, campaignId: string, mode: 'import' | 'register') {
  const fn = mode === 'import' ? 'pg_advisory_xact_lock_shared' : 'pg_advisory_xact_lock';
  await trx.raw(`select ${fn}(hashtextextended(?, 0))`, [`campaign-outcomes:${campaignId}`]);
}

/** The campaign's stored outcomes of one metric, as a geo-lift design or evaluation reads them. */
export async function loadPanel(db: Knex, campaignId: string, metric: string, knownMarkets: readonly string[]): Promise<GeoPanel> {
  const rows = await db.raw(
    `select to_char(date, 'YYYY-MM-DD') as date, market, value from campaign_outcomes where campaign_id = ? and metric = ?`,
    [campaignId, metric],
  );
  const byDate = new Map<string, Map<string, number>>();
  for (const r of rows.rows as Array<{ date: string; market: string; value: number }>) {
    if (!byDate.has(r.date)) byDate.set(r.date, new Map());
    byDate.get(r.date)!.set(r.market, Number(r.value));
  }
  return { byDate, knownMarkets };
}

const CHUNK = 1000;

/**
 * Imports a batch of daily outcome rows: all of it or none of it. A row for a day, market and
 * metric already stored replaces it; the batch is kept as the audit record of who sent what.
 */
export async function importOutcomes(
  db: Knex,
  p: Principal,
  campaignId: string,
  body: RawBody,
  contentType: string | undefined,
  markets: readonly Market[],
) {
  await requireCampaign(db, p, campaignId);
  const { format, rows } = parseOutcomes(body, contentType, markets);
  const id = randomUUID();
  return db.transaction(async (trx) => {
    await lockCampaignOutcomes(trx, campaignId, 'import');
    await trx('outcome_import_batches').insert({
      id,
      advertiser_id: p.advertiserId,
      campaign_id: campaignId,
      format,
      row_count: rows.length,
      replaced_count: 0,
      content_sha256: body.sha256,
      imported_by: p.userId,
      agent_client_id: p.agentClientId,
    });
    let replaced = 0;
    for (let i = 0; i < rows.length; i += CHUNK) {
      const chunk = rows.slice(i, i + CHUNK).map((r) => ({
        advertiser_id: p.advertiserId,
        campaign_id: campaignId,
        date: r.date,
        market: r.market,
        metric: r.metric,
        value: r.value,
        batch_id: id,
      }));
      const result = await trx.raw(
        `${trx('campaign_outcomes').insert(chunk).toQuery()}
         on conflict (campaign_id, date, market, metric)
         do update set value = excluded.value, batch_id = excluded.batch_id, updated_at = now()
         returning (xmax <> 0) as replaced`,
      );
      replaced += (result.rows as Array<{ replaced: boolean }>).filter((r) => r.replaced).length;
    }
    await trx('outcome_import_batches').where({ id }).update({ replaced_count: replaced });
    const batch = await trx('outcome_import_batches').where({ id }).first();
    return { batch: batchView(batch) };
  });
}

interface BatchRow {
  id: string;
  campaign_id: string;
  format: string;
  row_count: number;
  replaced_count: number;
  content_sha256: string;
  imported_by: string;
  agent_client_id: string | null;
  created_at: Date;
}

const batchView = (b: BatchRow) => ({
  id: b.id,
  campaignId: b.campaign_id,
  format: b.format,
  rowCount: b.row_count,
  insertedCount: b.row_count - b.replaced_count,
  replacedCount: b.replaced_count,
  contentSha256: b.content_sha256,
  importedBy: b.imported_by,
  agentClientId: b.agent_client_id,
  createdAt: b.created_at.toISOString(),
});

/** The campaign's import batches (newest first) and what is stored now. */
export async function outcomesView(db: Knex, p: Principal, campaignId: string) {
  await requireCampaign(db, p, campaignId);
  const batches = (await db('outcome_import_batches')
    .where({ campaign_id: campaignId })
    .orderBy([
      { column: 'created_at', order: 'desc' },
      { column: 'id', order: 'desc' },
    ])
    .limit(100)) as BatchRow[];
  const stored = await db.raw(
    `select metric, count(*)::int as rows, to_char(min(date), 'YYYY-MM-DD') as "from", to_char(max(date), 'YYYY-MM-DD') as "to",
            sum(value) as total
       from campaign_outcomes where campaign_id = ? group by metric order by metric`,
    [campaignId],
  );
  return {
    batches: batches.map(batchView),
    stored: stored.rows as Array<{ metric: string; rows: number; from: string; to: string; total: number }>,
  };
}
