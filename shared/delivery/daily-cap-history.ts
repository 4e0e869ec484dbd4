import type { Knex } from 'knex';
import { toMinor } from '../db/knex';

/**
 * The history of a campaign's daily caps (its own and its lines'): each change with the day it
 * took effect on the campaign's clock. A day's spend past the cap is measured against the cap in
 * force that day: lowering a cap does not make the days before it read as over.
 */
export interface CapChange {
  /** null for the campaign's own cap. */
  lineId: string | null;
  effectiveDay: string;
  fromMinor: number | null;
  toMinor: number | null;
}

/** Records a change in the caller's transaction; a second change the same day keeps the first's `from`. */
export async function recordCapChange(trx: Knex, campaignId: string, change: CapChange): Promise<void> {
  await trx.raw(
    `insert into daily_cap_changes (campaign_id, line_id, effective_day, from_minor, to_minor) values (?, ?, ?::date, ?, ?)
     on conflict (campaign_id, (coalesce(line_id::text, '')), effective_day) do update set to_minor = excluded.to_minor`,
    [campaignId, change.lineId, change.effectiveDay, change.fromMinor, change.toMinor],
  );
}

/** Every recorded change of a campaign's caps, oldest first. */
export async function capChangesOf(db: Knex, campaignId: string): Promise<CapChange[]> {
  const rows = (await db('daily_cap_changes')
    .where({ campaign_id: campaignId })
    .orderBy(['effective_day', 'id'])
    .select('line_id', db.raw("to_char(effective_day, 'YYYY-MM-DD') as effective_day"), 'from_minor', 'to_minor')) as Array<{
    line_id: string | null;
    effective_day: string;
    from_minor: string | null;
    to_minor: string | null;
  }>;
  return rows.map((r) => ({
    lineId: r.line_id,
    effectiveDay: r.effective_day,
    fromMinor: r.from_minor === null ? null : toMinor(r.from_minor),
    toMinor: r.to_minor === null ? null : toMinor(r.to_minor),
  }));
}

/**
 * The cap in force on `day`, from one cap's changes (oldest first) and its value now: the last
 * change that took effect by that day, else what the first later change replaced, else today's.
 */
export function capOn(day: string, current: number | null, changes: readonly CapChange[]): number | null {
  let inForce: CapChange | undefined;
  for (const c of changes) {
    if (c.effectiveDay > day) return inForce ? inForce.toMinor : c.fromMinor;
    inForce = c;
  }
  return inForce ? inForce.toMinor : current;
}
