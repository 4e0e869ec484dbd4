import type { Knex } from 'knex';
import { toMinor } from '../db/knex';
import type { OutlookDay } from './outlook';

type DayRow = { line_id: string; date: string; spend_minor: string; impressions: string };

/**
 * Each line's reported days, oldest first: all of them, or (`through`) those within its
 * campaign's flight up to `through` on the line's clock (a map of the last whole day per execution
 * mode), which is what the outlook reads. One query for all the lines.
 */
export async function reportedDays(
  db: Knex,
  lineIds: readonly string[],
  through?: Readonly<Record<'sandbox' | 'live', string>>,
): Promise<Map<string, OutlookDay[]>> {
  const out = new Map<string, OutlookDay[]>();
  if (!lineIds.length) return out;
  const rows = (await db('delivery_days as d')
    .whereIn('d.line_id', [...new Set(lineIds)])
    .modify((q) => {
      if (!through) return;
      q.join('booking_lines as l', 'l.id', 'd.line_id')
        .join('bookings as b', 'b.id', 'l.booking_id')
        .join('campaigns as c', 'c.id', 'b.campaign_id')
        .whereRaw('d.day between c.start_date and c.end_date')
        .whereRaw("d.day <= (case when l.execution_mode = 'sandbox' then ?::date else ?::date end)", [through.sandbox, through.live]);
    })
    .orderBy(['d.line_id', 'd.day'])
    .select('d.line_id', db.raw("to_char(d.day, 'YYYY-MM-DD') as date"), 'd.spend_minor', 'd.impressions')) as DayRow[];
  for (const r of rows) {
    const list = out.get(r.line_id) ?? [];
    list.push({ date: r.date, spendMinor: toMinor(r.spend_minor), impressions: toMinor(r.impressions) });
    out.set(r.line_id, list);
  }
  return out;
}
