import type { Knex } from 'knex';

/**
 * A change a supplier left to a person (docs/bookings.md, "Verified control"): a seller with no
 * cancel path is paused, and someone must end the buy there by hand. Staff record it done, with
 * the evidence, on the operation it belongs to.
 */
export async function up(db: Knex): Promise<void> {
  await db.schema.alterTable('line_operations', (t) => {
    t.timestamp('follow_up_done_at', { useTz: true });
    t.text('follow_up_done_by');
    t.text('follow_up_evidence');
  });
}

export async function down(db: Knex): Promise<void> {
  await db.schema.alterTable('line_operations', (t) => {
    t.dropColumn('follow_up_done_at');
    t.dropColumn('follow_up_done_by');
    t.dropColumn('follow_up_evidence');
  });
}
