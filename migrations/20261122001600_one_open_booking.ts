import type { Knex } from 'knex';

/**
 * A campaign has at most one open booking: a booking is open until it is rejected or
 * stopped. The launch path checks this under the campaign's row lock; the index makes it a
 * fact of the database, whatever path writes a booking.
 */
export async function up(db: Knex): Promise<void> {
  await db.raw("create unique index bookings_one_open_per_campaign on bookings (campaign_id) where status not in ('rejected', 'stopped')");
}

export async function down(db: Knex): Promise<void> {
  await db.raw('drop index if exists bookings_one_open_per_campaign');
}
