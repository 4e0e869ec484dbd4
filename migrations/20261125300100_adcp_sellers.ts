import type { Knex } from 'knex';

/**
 * Buying from AdCP sellers.
 * - Supplier access names the workspace's account on the seller (AdCP `account`: brand domain
 *   and operator); ops grant it with the access.
 * - A plan line on an AdCP seller names the seller's product and pricing option; the booked line
 *   keeps them (the approved snapshot digest covers the plan's).
 * - A booking the seller is still working on (`submitted`, `working`) waits as a supplier task:
 *   the seller's task id, asked about on a schedule (tasks/get) or answered by the seller's
 *   signed webhook, until its final outcome moves the line.
 */
export async function up(db: Knex): Promise<void> {
  await db.schema.alterTable('supplier_credentials', (t) => {
    t.jsonb('account');
  });
  await db.schema.alterTable('booking_lines', (t) => {
    t.jsonb('supplier_product');
  });
  await db.schema.createTable('supplier_tasks', (t) => {
    t.string('attempt_id', 100).primary();
    t.uuid('line_id').notNullable();
    t.uuid('booking_id').notNullable().references('bookings.id').onDelete('CASCADE');
    t.string('adapter_key', 100).notNullable();
    t.string('task_id', 300).notNullable();
    t.string('status', 32).notNullable(); // pending | done
    t.string('supplier_status', 32).notNullable(); // the seller's last word: submitted | working | ...
    t.integer('polls').notNullable().defaultTo(0);
    t.timestamp('next_poll_at', { useTz: true }).notNullable();
    t.jsonb('outcome');
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(db.fn.now());
    t.timestamp('finished_at', { useTz: true });
    t.unique(['adapter_key', 'task_id']);
  });
  await db.raw(`create index supplier_tasks_due on supplier_tasks (adapter_key, next_poll_at) where status = 'pending'`);
}

export async function down(db: Knex): Promise<void> {
  await db.schema.dropTableIfExists('supplier_tasks');
  await db.schema.alterTable('booking_lines', (t) => {
    t.dropColumn('supplier_product');
  });
  await db.schema.alterTable('supplier_credentials', (t) => {
    t.dropColumn('account');
  });
}
