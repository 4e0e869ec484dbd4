import type { Knex } from 'knex';

/**
 * A creative review the supplier holds to decide later (AdCP `pending_review`): the review waits
 * `at-supplier`, and is asked about on a schedule until the supplier approves or rejects it.
 */
export async function up(db: Knex): Promise<void> {
  await db.schema.alterTable('creative_reviews', (t) => {
    t.timestamp('next_check_at', { useTz: true });
    t.integer('checks').notNullable().defaultTo(0);
    t.timestamp('at_supplier_since', { useTz: true });
  });
  await db.raw(`create index creative_reviews_at_supplier on creative_reviews (adapter_key, next_check_at) where status = 'at-supplier'`);
}

export async function down(db: Knex): Promise<void> {
  await db.raw('drop index if exists creative_reviews_at_supplier');
  await db.schema.alterTable('creative_reviews', (t) => {
    t.dropColumn('next_check_at');
    t.dropColumn('checks');
    t.dropColumn('at_supplier_since');
  });
}
