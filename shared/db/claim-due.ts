import type { Knex } from 'knex';

/** A table of things an adapter's supplier is still deciding, each asked about on a schedule. */
export interface DueTable {
  table: string;
  /** The key column. */
  id: string;
  /** The status that means "still waiting on the supplier". */
  waiting: string;
  /** When the row is next due, moved an interval on by each claim. */
  dueAt: string;
  /** How many times the row was claimed. */
  count: string;
}

/**
 * Claims up to `limit` of an adapter's rows that are due by moving their due time an interval on:
 * two checkers never ask about one row at once, and a checker that dies leaves it due again
 * after one interval. Returns the claimed rows' `returning` columns.
 */
export async function claimDue<Row>(
  db: Knex,
  t: DueTable,
  returning: string[],
  adapterKey: string,
  intervalMs: number,
  limit: number,
): Promise<Row[]> {
  const { rows } = await db.raw<{ rows: Row[] }>(
    `update ?? as d set ?? = now() + (? * interval '1 millisecond'), ?? = d.?? + 1
      where d.?? in (
        select ?? from ?? where adapter_key = ? and status = ? and ?? <= now()
         order by ?? limit ? for update skip locked)
      returning ${returning.map(() => 'd.??').join(', ')}`,
    [t.table, t.dueAt, intervalMs, t.count, t.count, t.id, t.id, t.table, adapterKey, t.waiting, t.dueAt, t.dueAt, limit, ...returning],
  );
  return rows;
}
