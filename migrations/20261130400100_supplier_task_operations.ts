import type { Knex } from 'knex';

/**
 * A pause, resume, stop or budget change its supplier answers `pending` waits on a supplier task
 * as a booking does. The task names the operation it settles (null for a booking's task) and the
 * request the supplier was sent, so the supplier is asked about it, and its answer read back, as
 * the call itself would have been.
 */
export async function up(db: Knex): Promise<void> {
  await db.schema.alterTable('supplier_tasks', (t) => {
    t.uuid('operation_id').references('line_operations.id').onDelete('CASCADE');
    t.jsonb('operation');
  });
}

export async function down(db: Knex): Promise<void> {
  await db.schema.alterTable('supplier_tasks', (t) => {
    t.dropColumn('operation');
    t.dropColumn('operation_id');
  });
}
