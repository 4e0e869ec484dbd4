import type { Knex } from 'knex';
import { toMinor } from '../db/knex';
import { lastDayOfPeriod } from '../delivery/finality';

/** A line's month as delivery stands: final and provisional apart, and what of it can be billed. */
export interface LineMonthFigures {
  lineId: string;
  budgetMinor: number;
  finalMinor: number;
  finalImpressions: number;
  provisionalMinor: number;
  provisionalImpressions: number;
  /** The month's spend that fits under the line's budget, after its earlier months: delivery beyond it is never billed. */
  billableMinor: number;
  /** The line's billable spend in the months before. */
  billableBeforeMinor: number;
  closed: boolean;
}

// Per line: its spend before the month, and its month's figures, final and provisional apart.
const FIGURES = `
select l.id as line_id, l.budget_minor,
       coalesce(sum(d.spend_minor) filter (where d.day < ?::date), 0) as before_minor,
       coalesce(sum(d.spend_minor) filter (where d.day >= ?::date and d.final_at is not null), 0) as final_minor,
       coalesce(sum(d.impressions) filter (where d.day >= ?::date and d.final_at is not null), 0) as final_impressions,
       coalesce(sum(d.spend_minor) filter (where d.day >= ?::date and d.final_at is null), 0) as provisional_minor,
       coalesce(sum(d.impressions) filter (where d.day >= ?::date and d.final_at is null), 0) as provisional_impressions,
       exists (select 1 from delivery_month_closes x where x.line_id = l.id and x.period = ?) as closed
  from booking_lines l
  left join delivery_days d on d.line_id = l.id and d.day <= ?::date
 where l.id = any(?::uuid[])
 group by l.id, l.budget_minor`;

/**
 * The month's figures of these lines: a closed month's as they were when it closed (final days
 * never change after), an open one's read from its days.
 */
export async function lineMonthFigures(db: Knex, lineIds: readonly string[], period: string): Promise<Map<string, LineMonthFigures>> {
  const first = `${period}-01`;
  const last = lastDayOfPeriod(period);
  const out = new Map<string, LineMonthFigures>();
  if (!lineIds.length) return out;
  const closed = (await db('delivery_month_closes as x')
    .join('booking_lines as l', 'l.id', 'x.line_id')
    .whereIn('x.line_id', [...lineIds])
    .where('x.period', period)
    .select('x.line_id', 'l.budget_minor', 'x.final_minor', 'x.final_impressions', 'x.billable_minor', 'x.billable_before_minor')) as Array<
    Record<string, string>
  >;
  for (const r of closed) {
    out.set(r.line_id!, {
      lineId: r.line_id!,
      budgetMinor: toMinor(r.budget_minor),
      finalMinor: toMinor(r.final_minor),
      finalImpressions: toMinor(r.final_impressions),
      provisionalMinor: 0,
      provisionalImpressions: 0,
      billableMinor: toMinor(r.billable_minor),
      billableBeforeMinor: toMinor(r.billable_before_minor),
      closed: true,
    });
  }
  const open = lineIds.filter((id) => !out.has(id));
  if (!open.length) return out;
  const { rows } = await db.raw(FIGURES, [first, first, first, first, first, period, last, open]);
  for (const r of rows as Array<Record<string, string | number | boolean>>) {
    const budget = toMinor(r.budget_minor as string);
    const before = toMinor(r.before_minor as string);
    const finalMinor = toMinor(r.final_minor as string);
    const provisionalMinor = toMinor(r.provisional_minor as string);
    const billableBeforeMinor = Math.min(before, budget);
    out.set(String(r.line_id), {
      lineId: String(r.line_id),
      budgetMinor: budget,
      finalMinor,
      finalImpressions: toMinor(r.final_impressions as string),
      provisionalMinor,
      provisionalImpressions: toMinor(r.provisional_impressions as string),
      billableMinor: Math.min(before + finalMinor + provisionalMinor, budget) - billableBeforeMinor,
      billableBeforeMinor,
      closed: false,
    });
  }
  return out;
}
