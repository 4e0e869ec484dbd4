import type { Knex } from 'knex';

/**
 * A running line's last outlook classification (on-track, under-delivery, early-exhaustion) and how
 * many times it has moved: when new figures move it, subscribers are told
 * (`delivery.outlook_changed`, the line's outlook version as the subject version).
 */
export async function up(db: Knex): Promise<void> {
  await db.schema.alterTable('booking_lines', (t) => {
    t.string('outlook_class', 20);
    t.integer('outlook_version').notNullable().defaultTo(0);
  });
}

export async function down(db: Knex): Promise<void> {
  await db.schema.alterTable('booking_lines', (t) => {
    t.dropColumn('outlook_class');
    t.dropColumn('outlook_version');
  });
}
