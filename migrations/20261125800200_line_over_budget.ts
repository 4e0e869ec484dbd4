import type { Knex } from 'knex';

/** When a line's delivered spend first went past its budget: subscribers are told once (`delivery.over_budget`). */
export async function up(db: Knex): Promise<void> {
  await db.schema.alterTable('booking_lines', (t) => {
    t.timestamp('over_budget_at', { useTz: true });
  });
}

export async function down(db: Knex): Promise<void> {
  await db.schema.alterTable('booking_lines', (t) => {
    t.dropColumn('over_budget_at');
  });
}
