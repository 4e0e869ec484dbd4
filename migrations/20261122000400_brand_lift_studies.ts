import type { Knex } from 'knex';

/** Brand lift studies, their quotes and the explicit human approvals that fund them. */
export async function up(db: Knex): Promise<void> {
  await db.schema.createTable('brand_lift_studies', (t) => {
    t.uuid('id').primary();
    t.string('advertiser_id', 200).notNullable().references('workspaces.id').onDelete('CASCADE');
    t.uuid('campaign_id').references('campaigns.id').onDelete('SET NULL');
    t.string('name', 200).notNullable();
    t.integer('revision').notNullable().defaultTo(1);
    t.integer('connection_revision'); // the research provider connection's revision, when connected
    t.string('status', 16).notNullable().defaultTo('setup'); // setup | drafted
    t.string('created_by', 200).notNullable();
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(db.fn.now());
    t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(db.fn.now());
  });

  await db.schema.createTable('study_quotes', (t) => {
    t.uuid('id').primary();
    t.uuid('study_id').notNullable().references('brand_lift_studies.id').onDelete('CASCADE');
    t.string('advertiser_id', 200).notNullable();
    t.integer('sample_size').notNullable();
    t.bigInteger('amount_minor').notNullable();
    t.string('currency', 3).notNullable().defaultTo('GBP');
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(db.fn.now());
  });

  await db.schema.createTable('study_approvals', (t) => {
    t.uuid('id').primary();
    t.uuid('study_id').notNullable().references('brand_lift_studies.id').onDelete('CASCADE');
    t.uuid('quote_id').notNullable().references('study_quotes.id').onDelete('CASCADE');
    t.string('advertiser_id', 200).notNullable();
    t.bigInteger('funded_minor').notNullable(); // reserved against the wallet when approved
    t.string('approved_by', 200).notNullable();
    t.timestamp('used_at', { useTz: true });
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(db.fn.now());
  });

  await db.schema.createTable('study_fund_reservations', (t) => {
    t.uuid('approval_id').primary().references('study_approvals.id').onDelete('CASCADE');
    t.string('advertiser_id', 200).notNullable();
    t.bigInteger('amount_minor').notNullable();
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(db.fn.now());
  });
}

export async function down(db: Knex): Promise<void> {
  for (const table of ['study_fund_reservations', 'study_approvals', 'study_quotes', 'brand_lift_studies']) {
    await db.schema.dropTableIfExists(table);
  }
}
