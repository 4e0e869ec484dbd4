import type { Knex } from 'knex';

/**
 * A line's status is one of the states its operations declare (shared/bookings/lines/operations.ts),
 * held by the database as its operation kinds already are (`booking_lines_operation`,
 * `line_operations_kind`); test/bookings/line-registry.test.ts holds the three lists equal to the
 * registry. Added unvalidated, then validated, so the table is not locked against writes while
 * its rows are checked.
 */
export async function up(db: Knex): Promise<void> {
  await db.raw(`alter table booking_lines add constraint booking_lines_status
    check (status in ('queued', 'in-progress', 'confirmed', 'rejected', 'reconciliation-required', 'stop-requested', 'stopping', 'stopped'))
    not valid`);
  await db.raw('alter table booking_lines validate constraint booking_lines_status');
}

export async function down(db: Knex): Promise<void> {
  await db.raw('alter table booking_lines drop constraint booking_lines_status');
}
