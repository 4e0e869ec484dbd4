import type { Knex } from 'knex';

/**
 * Reservations record what was given back when a booking settles; assets record every
 * workspace that uploaded the same bytes (content-addressed files are shared, ownership is not).
 */
export async function up(db: Knex): Promise<void> {
  await db.schema.alterTable('wallet_reservations', (t) => {
    t.bigInteger('released_minor').notNullable().defaultTo(0);
    t.timestamp('settled_at', { useTz: true });
  });
  await db.schema.createTable('asset_owners', (t) => {
    t.string('asset_name', 100).notNullable().references('assets.name').onDelete('CASCADE');
    t.string('advertiser_id', 200).notNullable().references('workspaces.id').onDelete('CASCADE');
    t.string('uploaded_by', 200);
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(db.fn.now());
    t.primary(['asset_name', 'advertiser_id']);
  });
  await db.raw(
    'insert into asset_owners (asset_name, advertiser_id, uploaded_by) select name, advertiser_id, uploaded_by from assets where advertiser_id is not null on conflict do nothing',
  );
}

export async function down(db: Knex): Promise<void> {
  await db.schema.dropTableIfExists('asset_owners');
  await db.schema.alterTable('wallet_reservations', (t) => {
    t.dropColumn('released_minor');
    t.dropColumn('settled_at');
  });
}
