import type { Knex } from 'knex';

/**
 * A booking keeps how many of its lines are in each status, changed by the statement that
 * changes a line. Its status then follows from one row it already locks, instead of a read
 * of every line on each change.
 */
export async function up(db: Knex): Promise<void> {
  await db.schema.alterTable('bookings', (t) => {
    t.jsonb('line_counts').notNullable().defaultTo(db.raw(`'{}'::jsonb`));
  });
  await db.raw(`
    update bookings b
       set line_counts = coalesce(
             (select jsonb_object_agg(status, n)
                from (select status, count(*)::int as n from booking_lines where booking_id = b.id group by status) s),
             '{}'::jsonb)`);
}

export async function down(db: Knex): Promise<void> {
  await db.schema.alterTable('bookings', (t) => t.dropColumn('line_counts'));
}
