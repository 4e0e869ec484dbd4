import type { Knex } from 'knex';

/**
 * Pageviews are accepted into a Redis stream and written in batches. Each row remembers the
 * stream entry it came from, so a batch written again after a crash before its acknowledgement
 * adds nothing.
 */
export async function up(db: Knex): Promise<void> {
  await db.schema.alterTable('pixel_events', (t) => {
    t.string('stream_id', 41).unique('pixel_events_stream_id');
  });
}

export async function down(db: Knex): Promise<void> {
  await db.schema.alterTable('pixel_events', (t) => t.dropColumn('stream_id'));
}
