import type { Knex } from 'knex';

/**
 * Pageviews per workspace and UTC day. A pageview is stamped when it is accepted, so once a
 * day is over and every pageview accepted on it is stored (they wait in a Redis stream for a
 * few seconds; see pixel-stream.ts), its count can no longer change: a maintenance job rolls
 * finished days up once, and readers count raw events only for the days after the rollup
 * (usually just today).
 */
const DAY_MS = 86_400_000;
const dayOf = (d: Date) => d.toISOString().slice(0, 10);

async function rolledThrough(db: Knex): Promise<string | null> {
  const row = await db('pixel_rollup_state').where({ id: 1 }).first(db.raw("to_char(rolled_through, 'YYYY-MM-DD') as day"));
  return row ? String(row.day) : null;
}

/** Rolls up every day finished by `now` not yet rolled up. Safe to run twice, or concurrently. */
export async function rollUpPageviews(db: Knex, now = new Date()): Promise<number> {
  const yesterday = dayOf(new Date(now.getTime() - DAY_MS));
  return db.transaction(async (trx) => {
    // One roller at a time; the others find the work done.
    await trx.raw('select pg_advisory_xact_lock(hashtext(?))', ['pixel-rollup']);
    const through = await rolledThrough(trx);
    if (through !== null && through >= yesterday) return 0;
    const q = trx('pixel_events').where('received_at', '<', `${dayOf(now)}T00:00:00Z`);
    if (through !== null) q.where('received_at', '>=', new Date(new Date(`${through}T00:00:00Z`).getTime() + DAY_MS));
    const rows = await q
      .groupBy('advertiser_id', trx.raw("(received_at at time zone 'utc')::date"))
      .select('advertiser_id', trx.raw("(received_at at time zone 'utc')::date as day"), trx.raw('count(*) as pageviews'));
    for (let i = 0; i < rows.length; i += 1000) {
      await trx('pixel_daily_counts')
        .insert(rows.slice(i, i + 1000))
        .onConflict(['advertiser_id', 'day'])
        .merge();
    }
    await trx('pixel_rollup_state').insert({ id: 1, rolled_through: yesterday }).onConflict('id').merge();
    return rows.length;
  });
}

/** Pageviews per UTC day from `from` to `to` (inclusive), zero-filled. */
export async function pageviewsByDay(
  db: Knex,
  advertiserId: string,
  from: Date,
  to: Date,
): Promise<Array<{ date: string; pageviews: number }>> {
  const counts = new Map<string, number>();
  const through = await rolledThrough(db);
  if (through !== null && through >= dayOf(from)) {
    const rolled = await db('pixel_daily_counts')
      .where({ advertiser_id: advertiserId })
      .whereBetween('day', [dayOf(from), through < dayOf(to) ? through : dayOf(to)])
      .select(db.raw("to_char(day, 'YYYY-MM-DD') as day"), 'pageviews');
    for (const r of rolled) counts.set(String(r.day), Number(r.pageviews));
  }
  const rawFrom = through !== null && through >= dayOf(from) ? new Date(new Date(`${through}T00:00:00Z`).getTime() + DAY_MS) : from;
  const end = new Date(to.getTime() + DAY_MS);
  if (rawFrom < end) {
    const raw = await db('pixel_events')
      .where('advertiser_id', advertiserId)
      .where('received_at', '>=', rawFrom)
      .where('received_at', '<', end)
      .groupByRaw("(received_at at time zone 'utc')::date")
      .select(db.raw("to_char((received_at at time zone 'utc')::date, 'YYYY-MM-DD') as day"), db.raw('count(*) as n'));
    for (const r of raw) counts.set(String(r.day), Number(r.n));
  }
  const days: Array<{ date: string; pageviews: number }> = [];
  for (let t = from.getTime(); t < end.getTime(); t += DAY_MS) {
    const date = dayOf(new Date(t));
    days.push({ date, pageviews: counts.get(date) ?? 0 });
  }
  return days;
}
