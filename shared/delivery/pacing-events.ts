import type { Knex } from 'knex';
import { recordEvent } from '../events/record';
import { toMinor } from '../db/knex';
import { runningLinePacing, type LinePacing } from './delivery-figures';
import type { Outlook } from './outlook';

/**
 * After new delivery figures for these lines: each running line whose pacing status (on-track,
 * under, over) moved is recorded on the line, and subscribers are told in the same transaction
 * (`delivery.pacing_changed`, the line's pacing version as the subject version). A line first
 * seen on track is recorded without an event: nothing moved. Any of the lines whose delivered
 * spend first went past its budget, running or not (a restatement after the flight, a staff
 * entry), is marked, and subscribers are told once (`delivery.over_budget`). Each running line's
 * outlook classification is kept the same way (`delivery.outlook_changed`).
 * Returns how many lines moved or went over.
 */
export async function notePacingChanges(trx: Knex, lineIds: readonly string[], tolerance: number, real = new Date()): Promise<number> {
  if (!lineIds.length) return 0;
  const owners = (await trx('booking_lines')
    .whereIn('id', [...new Set(lineIds)])
    .select('id', 'advertiser_id')) as Array<{
    id: string;
    advertiser_id: string;
  }>;
  const byWorkspace = new Map<string, string[]>();
  for (const o of owners) byWorkspace.set(o.advertiser_id, [...(byWorkspace.get(o.advertiser_id) ?? []), o.id]);
  let moved = 0;
  for (const [workspaceId, ids] of byWorkspace) {
    const running = await runningLinePacing(trx, workspaceId, (q) => q.whereIn('l.id', ids), tolerance, real, { outlook: true });
    moved += await noteOutlookChanges(trx, workspaceId, running);
    for (const line of running) {
      const [row] = (await trx('booking_lines')
        .where({ id: line.lineId })
        .whereRaw('pacing_status is distinct from ?', [line.pacing.status])
        .update({ pacing_status: line.pacing.status, pacing_version: trx.raw('pacing_version + 1') })
        .returning(['pacing_version'])) as Array<{ pacing_version: number }>;
      if (!row || (row.pacing_version === 1 && line.pacing.status === 'on-track')) continue;
      moved++;
      await recordEvent(trx, {
        workspaceId,
        type: 'delivery.pacing_changed',
        subjectId: line.lineId,
        subjectVersion: row.pacing_version,
        body: {
          campaignId: line.campaignId,
          bookingId: line.bookingId,
          lineId: line.lineId,
          status: line.pacing.status,
          ratio: line.pacing.ratio,
          expectedSpendMinor: line.pacing.expectedSpendMinor,
          deliveredSpendMinor: line.deliveredSpendMinor,
        },
      });
    }
  }
  return moved + (await markOverBudget(trx, [...new Set(lineIds)]));
}

// Each line's new classification, set where it moved, in one statement; the previous one comes back with it.
const SET_OUTLOOK = `
with input(id, cls) as (select * from unnest(?::uuid[], ?::text[])),
old as (select l.id, l.outlook_class from booking_lines l join input i on i.id = l.id for update of l)
update booking_lines l set outlook_class = i.cls, outlook_version = l.outlook_version + 1
  from input i, old o
 where l.id = i.id and o.id = l.id and o.outlook_class is distinct from i.cls
returning l.id, l.outlook_version, o.outlook_class as previous`;

/**
 * Records the running lines' outlook classifications where they moved, and tells subscribers
 * (`delivery.outlook_changed`); a line first seen on track moved nothing. How many were told.
 */
async function noteOutlookChanges(trx: Knex, workspaceId: string, running: readonly LinePacing[]): Promise<number> {
  const lines = running.filter((l): l is LinePacing & { outlook: Outlook } => l.outlook !== undefined);
  if (!lines.length) return 0;
  const { rows } = await trx.raw<{ rows: Array<{ id: string; outlook_version: number; previous: string | null }> }>(SET_OUTLOOK, [
    lines.map((l) => l.lineId),
    lines.map((l) => l.outlook.classification),
  ]);
  const byId = new Map(lines.map((l) => [l.lineId, l]));
  let told = 0;
  for (const row of rows) {
    const line = byId.get(row.id)!;
    const o = line.outlook;
    if (row.outlook_version === 1 && o.classification === 'on-track') continue;
    told++;
    await recordEvent(trx, {
      workspaceId,
      type: 'delivery.outlook_changed',
      subjectId: line.lineId,
      subjectVersion: row.outlook_version,
      body: {
        campaignId: line.campaignId,
        bookingId: line.bookingId,
        lineId: line.lineId,
        classification: o.classification,
        previous: row.previous,
        exhaustionDate: o.exhaustionDate,
        budgetMinor: line.budgetMinor,
        deliveredSpendMinor: line.deliveredSpendMinor,
        projectedSpendMinor: o.spend.projectedMinor,
        lowMinor: o.spend.lowMinor,
        highMinor: o.spend.highMinor,
        level: o.level,
      },
    });
  }
  return told;
}

// The lines whose delivered spend is past their budget and that were not yet marked, marked now.
const MARK_OVER_BUDGET = `
with spent as (
  select d.line_id, sum(d.spend_minor) as delivered from delivery_days d where d.line_id = any(?::uuid[]) group by d.line_id)
update booking_lines l set over_budget_at = now()
  from spent s, bookings b
 where l.id = s.line_id and b.id = l.booking_id and l.over_budget_at is null and s.delivered > l.budget_minor
returning l.id, l.advertiser_id, l.booking_id, b.campaign_id, l.budget_minor, s.delivered`;

/** Marks the lines over their budget and tells subscribers, the first time only; how many were marked. */
async function markOverBudget(trx: Knex, lineIds: string[]): Promise<number> {
  const { rows } = await trx.raw<{
    rows: Array<{ id: string; advertiser_id: string; booking_id: string; campaign_id: string; budget_minor: string; delivered: string }>;
  }>(MARK_OVER_BUDGET, [lineIds]);
  for (const r of rows) {
    const budgetMinor = toMinor(r.budget_minor);
    const deliveredSpendMinor = toMinor(r.delivered);
    await recordEvent(trx, {
      workspaceId: r.advertiser_id,
      type: 'delivery.over_budget',
      subjectId: r.id,
      subjectVersion: 1,
      body: {
        campaignId: r.campaign_id,
        bookingId: r.booking_id,
        lineId: r.id,
        budgetMinor,
        deliveredSpendMinor,
        overDeliveredMinor: deliveredSpendMinor - budgetMinor,
      },
    });
  }
  return rows.length;
}
