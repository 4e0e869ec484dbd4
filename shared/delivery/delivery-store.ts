import type { Knex } from 'knex';
import type { DeliveryDay, DeliveryReport } from '../adapters/adapter';
import { toMinor } from '../db/knex';
import { badRequest } from '../errors';
import { recordEvent } from '../events/record';

/** Which line a report is for, with what its rows are filed under. */
export interface DeliveryLineRef {
  lineId: string;
  advertiserId: string;
  bookingId: string;
}

/** Who gave the figures: the supplier's report, or a staff member entering a workflow line's. */
export type DeliverySource = { kind: 'supplier' } | { kind: 'staff'; actorId: string };

export interface DeliveryReportFor {
  line: DeliveryLineRef;
  report: DeliveryReport;
}

const DAY = /^\d{4}-\d{2}-\d{2}$/;
const FIGURES = ['impressions', 'clicks', 'completions', 'spendMinor'] as const;

/** A report we would store as it is: calendar dates, whole non-negative figures, each day once. */
export function checkReport(report: DeliveryReport, what = 'report'): void {
  if (Number.isNaN(Date.parse(report.asOf))) throw badRequest(`The ${what}'s asOf is not a time.`);
  const seen = new Set<string>();
  for (const d of report.days) {
    if (!DAY.test(d.date) || new Date(`${d.date}T00:00:00Z`).toISOString().slice(0, 10) !== d.date) {
      throw badRequest(`${d.date} is not a calendar date (${what}).`);
    }
    if (seen.has(d.date)) throw badRequest(`${d.date} appears twice (${what}).`);
    seen.add(d.date);
    for (const f of FIGURES) {
      if (!Number.isSafeInteger(d[f]) || d[f] < 0) throw badRequest(`${f} on ${d.date} must be a whole number, 0 or more (${what}).`);
    }
  }
}

export interface RecordedDelivery {
  /** Line-days whose figures were new or changed (each one revision). */
  changed: Array<{ lineId: string; day: string; revision: number }>;
  /** Final days the source gave another figure for: kept apart as discrepancies, not applied. */
  restated: Array<{ discrepancyId: string; lineId: string; day: string }>;
}

// One statement for the whole batch. A final day is never updated: a different figure for it
// becomes a discrepancy (once per distinct figure). Then the days the source calls final are marked.
const RECORD = `
with incoming as (
  select * from unnest(?::uuid[], ?::text[], ?::uuid[], ?::date[], ?::bigint[], ?::bigint[], ?::bigint[], ?::bigint[], ?::timestamptz[])
    as t(line_id, advertiser_id, booking_id, day, impressions, clicks, completions, spend_minor, as_of)
),
upserted as (
  insert into delivery_days as d (line_id, day, advertiser_id, booking_id, impressions, clicks, completions, spend_minor,
    revision, source, entered_by, as_of)
  select line_id, day, advertiser_id, booking_id, impressions, clicks, completions, spend_minor, 1, ?, ?, as_of from incoming i
   where not exists (select 1 from delivery_month_closes x where x.line_id = i.line_id and x.period = to_char(i.day, 'YYYY-MM') and i.day <= x.last_day)
  on conflict (line_id, day) do update set
    impressions = excluded.impressions, clicks = excluded.clicks, completions = excluded.completions,
    spend_minor = excluded.spend_minor, revision = d.revision + 1, source = excluded.source,
    entered_by = excluded.entered_by, as_of = excluded.as_of, recorded_at = now()
  where d.final_at is null and (d.impressions, d.clicks, d.completions, d.spend_minor)
    is distinct from (excluded.impressions, excluded.clicks, excluded.completions, excluded.spend_minor)
  returning d.*
),
kept as (
  insert into delivery_revisions (line_id, day, revision, impressions, clicks, completions, spend_minor, source, entered_by, as_of)
  select line_id, day, revision, impressions, clicks, completions, spend_minor, source, entered_by, as_of from upserted
),
restated as (
  insert into delivery_discrepancies (id, advertiser_id, line_id, booking_id, adapter_key, day,
    final_impressions, final_clicks, final_completions, final_spend_minor,
    reported_impressions, reported_clicks, reported_completions, reported_spend_minor, reported_by, reported_as_of)
  select gen_random_uuid(), l.advertiser_id, i.line_id, i.booking_id, l.adapter_key, i.day,
    coalesce(d.impressions, 0), coalesce(d.clicks, 0), coalesce(d.completions, 0), coalesce(d.spend_minor, 0),
    i.impressions, i.clicks, i.completions, i.spend_minor, ?, i.as_of
  from incoming i
  join booking_lines l on l.id = i.line_id
  left join delivery_days d on d.line_id = i.line_id and d.day = i.day
  -- A final day, or a day first reported after its month closed (final with no figures).
  where (d.final_at is not null or (d.line_id is null and exists (select 1 from delivery_month_closes x
           where x.line_id = i.line_id and x.period = to_char(i.day, 'YYYY-MM') and i.day <= x.last_day)))
    and (coalesce(d.impressions, 0), coalesce(d.clicks, 0), coalesce(d.completions, 0), coalesce(d.spend_minor, 0))
    is distinct from (i.impressions, i.clicks, i.completions, i.spend_minor)
  on conflict do nothing
  returning *
)
select line_id, to_char(day, 'YYYY-MM-DD') as day, revision, null::uuid as discrepancy_id, null::jsonb as discrepancy from upserted
union all
select line_id, to_char(day, 'YYYY-MM-DD'), null, id, to_jsonb(restated) from restated`;

const MARK_SELLER_FINAL = `
update delivery_days d set final_at = now(), final_source = 'seller'
  from unnest(?::uuid[], ?::date[]) as t(line_id, day)
 where d.line_id = t.line_id and d.day = t.day and d.final_at is null`;

/**
 * Stores reports: each day's latest figures in `delivery_days`, and every new or changed figure as
 * a revision in `delivery_revisions` (a figure reported again unchanged writes nothing). One
 * statement for the whole batch, so a batch of thousands of lines is one round trip; a report
 * sent twice stores nothing the second time. A day that is final keeps its figures: another
 * figure for it is recorded as a discrepancy and told to subscribers (`delivery.discrepancy`),
 * for a person to take up. Days the source calls final are marked so once stored.
 */
export async function recordDelivery(db: Knex, reports: DeliveryReportFor[], source: DeliverySource): Promise<RecordedDelivery> {
  const cols = {
    line: [] as string[],
    advertiser: [] as string[],
    booking: [] as string[],
    day: [] as string[],
    impressions: [] as number[],
    clicks: [] as number[],
    completions: [] as number[],
    spend: [] as number[],
    asOf: [] as string[],
  };
  const final = { line: [] as string[], day: [] as string[] };
  for (const { line, report } of reports) {
    checkReport(report);
    for (const d of report.days as DeliveryDay[]) {
      cols.line.push(line.lineId);
      cols.advertiser.push(line.advertiserId);
      cols.booking.push(line.bookingId);
      cols.day.push(d.date);
      cols.impressions.push(d.impressions);
      cols.clicks.push(d.clicks);
      cols.completions.push(d.completions);
      cols.spend.push(d.spendMinor);
      cols.asOf.push(report.asOf);
      if (d.final === true) {
        final.line.push(line.lineId);
        final.day.push(d.date);
      }
    }
  }
  if (!cols.line.length) return { changed: [], restated: [] };
  const enteredBy = source.kind === 'staff' ? source.actorId : null;
  const { rows } = await db.raw(RECORD, [
    cols.line,
    cols.advertiser,
    cols.booking,
    cols.day,
    cols.impressions,
    cols.clicks,
    cols.completions,
    cols.spend,
    cols.asOf,
    source.kind,
    enteredBy,
    source.kind,
  ]);
  if (final.line.length) await db.raw(MARK_SELLER_FINAL, [final.line, final.day]);
  const out: RecordedDelivery = { changed: [], restated: [] };
  for (const r of rows as Array<{
    line_id: string;
    day: string;
    revision: number | null;
    discrepancy_id: string | null;
    discrepancy: Record<string, unknown> | null;
  }>) {
    if (r.discrepancy_id) {
      out.restated.push({ discrepancyId: r.discrepancy_id, lineId: r.line_id, day: r.day });
      await tellDiscrepancy(db, r.discrepancy!, r.day);
    } else out.changed.push({ lineId: r.line_id, day: r.day, revision: Number(r.revision) });
  }
  return out;
}

/** Subscribers hear of a restated final day in the transaction that records it. */
async function tellDiscrepancy(db: Knex, d: Record<string, unknown>, day: string): Promise<void> {
  const n = (k: string) => toMinor(d[k] as string | number);
  await recordEvent(db, {
    workspaceId: String(d.advertiser_id),
    type: 'delivery.discrepancy',
    subjectId: String(d.id),
    subjectVersion: 1,
    body: {
      lineId: String(d.line_id),
      bookingId: String(d.booking_id),
      seller: String(d.adapter_key),
      day,
      finalImpressions: n('final_impressions'),
      finalSpendMinor: n('final_spend_minor'),
      reportedImpressions: n('reported_impressions'),
      reportedSpendMinor: n('reported_spend_minor'),
    },
  });
}

/** Marks lines as asked and answered, with the supplier's as-of time. */
export async function markFetched(db: Knex, results: Array<{ lineId: string; asOf: string }>): Promise<void> {
  if (!results.length) return;
  await db.raw(
    `insert into delivery_fetches (line_id, attempted_at, succeeded_at, as_of, last_error, failures)
     select line_id, now(), now(), as_of, null, 0 from unnest(?::uuid[], ?::timestamptz[]) as t(line_id, as_of)
     on conflict (line_id) do update set attempted_at = now(), succeeded_at = now(), as_of = excluded.as_of,
       last_error = null, failures = 0`,
    [results.map((r) => r.lineId), results.map((r) => r.asOf)],
  );
}

/** Marks lines as asked and not answered: their figures stay as they were, and grow older. */
export async function markFetchFailed(db: Knex, lineIds: string[], error: string): Promise<void> {
  if (!lineIds.length) return;
  await db.raw(
    `insert into delivery_fetches (line_id, attempted_at, last_error, failures)
     select line_id, now(), ?, 1 from unnest(?::uuid[]) as t(line_id)
     on conflict (line_id) do update set attempted_at = now(), last_error = excluded.last_error,
       failures = delivery_fetches.failures + 1`,
    [error.slice(0, 500), lineIds],
  );
}

/** The sums of a line's held days from `from` to before `before`: what a seller's running totals are measured against. */
export async function heldDelivery(
  db: Knex,
  lineId: string,
  from: string,
  before: string,
): Promise<{ impressions: number; clicks: number; completions: number; spendMinor: number }> {
  const row = (await db('delivery_days')
    .where({ line_id: lineId })
    .where('day', '>=', from)
    .where('day', '<', before)
    .first(
      db.raw('coalesce(sum(impressions), 0)::bigint as impressions'),
      db.raw('coalesce(sum(clicks), 0)::bigint as clicks'),
      db.raw('coalesce(sum(completions), 0)::bigint as completions'),
      db.raw('coalesce(sum(spend_minor), 0)::bigint as spend'),
    )) as { impressions: string; clicks: string; completions: string; spend: string };
  return {
    impressions: Number(row.impressions),
    clicks: Number(row.clicks),
    completions: Number(row.completions),
    spendMinor: Number(row.spend),
  };
}
