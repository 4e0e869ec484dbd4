import type { Knex } from 'knex';

/**
 * A line's last pacing status (on-track, under, over) as its delivery was last recorded, and how
 * many times it has moved: when a new figure moves it, subscribers are told
 * (`delivery.pacing_changed`, the line's pacing version as the subject version).
 */
export async function up(db: Knex): Promise<void> {
  await db.schema.alterTable('booking_lines', (t) => {
    t.string('pacing_status', 16);
    t.integer('pacing_version').notNullable().defaultTo(0);
  });
}

export async function down(db: Knex): Promise<void> {
  await db.schema.alterTable('booking_lines', (t) => {
    t.dropColumn('pacing_status');
    t.dropColumn('pacing_version');
  });
}
