import type { Knex } from 'knex';

/** Supplier access rows get an id, so that `npm run admin -- suppliers …` can name the row it changes. */
export async function up(db: Knex): Promise<void> {
  await db.raw('alter table supplier_credentials add column id bigint generated always as identity primary key');
}

export async function down(db: Knex): Promise<void> {
  await db.schema.alterTable('supplier_credentials', (t) => {
    t.dropColumn('id');
  });
}
