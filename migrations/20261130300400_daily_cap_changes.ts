import type { Knex } from 'knex';

/**
 * Each change of a daily cap with the day it took effect on its campaign's clock, so that a day's
 * spend past the cap is measured against the cap in force that day, not today's (docs/delivery.md,
 * Daily caps). A campaign's own cap has no line; several changes on one day keep the first's
 * `from` and the last's `to`.
 */
export async function up(db: Knex): Promise<void> {
  await db.schema.createTable('daily_cap_changes', (t) => {
    t.bigIncrements('id');
    t.uuid('campaign_id').notNullable().references('id').inTable('campaigns').onDelete('cascade');
    t.uuid('line_id').references('id').inTable('booking_lines').onDelete('cascade');
    t.date('effective_day').notNullable();
    t.bigInteger('from_minor');
    t.bigInteger('to_minor');
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(db.fn.now());
  });
  await db.raw(
    `create unique index daily_cap_changes_once_a_day on daily_cap_changes (campaign_id, (coalesce(line_id::text, '')), effective_day)`,
  );
}

export async function down(db: Knex): Promise<void> {
  await db.schema.dropTableIfExists('daily_cap_changes');
}
