import type { Knex } from 'knex';
import { z } from 'zod';
import { DateTimeSchema } from '../wire';

/**
 * How fresh the spend is that a budget change is judged against: each line's latest successful
 * delivery fetch. Figures older than the delivery poll interval (or none yet) are stale: the line
 * may have spent more than they say, and the answer says so (the console asks to confirm).
 */
export const SpendFiguresSchema = z
  .object({
    /** The oldest of the lines' latest figures; null when a line has none yet. */
    asOf: DateTimeSchema.nullable(),
    stale: z.boolean(),
    /** What a person should know before relying on them; null when fresh. */
    warning: z.string().nullable(),
  })
  .meta({ id: 'SpendFigures' });
export type SpendFigures = z.infer<typeof SpendFiguresSchema> & { byLine: Map<string, Date | null> };

export async function spendFigures(trx: Knex, lines: Array<{ id: string }>, pollEveryMs: number, now = new Date()): Promise<SpendFigures> {
  const rows = (await trx('delivery_fetches')
    .whereIn(
      'line_id',
      lines.map((l) => l.id),
    )
    .select('line_id', 'succeeded_at')) as Array<{ line_id: string; succeeded_at: Date | null }>;
  const byLine = new Map<string, Date | null>(lines.map((l) => [l.id, rows.find((r) => r.line_id === l.id)?.succeeded_at ?? null]));
  const dates = [...byLine.values()];
  const oldest = dates.includes(null) ? null : (dates as Date[]).reduce<Date | null>((a, b) => (a && a < b ? a : b), null);
  const stale = oldest === null || now.getTime() - oldest.getTime() > pollEveryMs;
  const minutes = Math.round(pollEveryMs / 60_000);
  return {
    asOf: oldest?.toISOString() ?? null,
    stale,
    warning: stale
      ? `The spend figures ${oldest ? `are from ${oldest.toISOString()}, older than the ${minutes}-minute delivery poll` : 'have not arrived yet for every line'}: the lines may have spent more than they show.`
      : null,
    byLine,
  };
}

/** " (figures as of …, stale)" for a line's spend in a refusal. */
export function figuresAsOf(figures: SpendFigures, lineId: string): string {
  const at = figures.byLine.get(lineId);
  if (!figures.stale) return at ? ` (figures as of ${at.toISOString()})` : '';
  return at
    ? ` (figures as of ${at.toISOString()}, older than the delivery poll: it may have spent more)`
    : ' (no figures yet: it may have spent more)';
}
