import type { Knex } from 'knex';

/**
 * When each operation took effect at a sandbox supplier, on the supplier's clock (the workspace's
 * sandbox test clock at the moment it was received): the sandbox's delivery honours pause, resume,
 * stop, budget and end-date changes from then on, however the clock moves later.
 */
export async function up(db: Knex): Promise<void> {
  await db.schema.alterTable('sandbox_ledger', (t) => {
    t.timestamp('effective_at', { useTz: true });
    t.index(['line_id', 'id']);
  });
}

export async function down(db: Knex): Promise<void> {
  await db.schema.alterTable('sandbox_ledger', (t) => {
    t.dropIndex(['line_id', 'id']);
    t.dropColumn('effective_at');
  });
}
