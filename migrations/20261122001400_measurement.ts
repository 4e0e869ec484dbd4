import type { Knex } from 'knex';

/** Outcomes imports, geo-lift evidence, optimization suggestions and brand lift study artifacts. */
export async function up(db: Knex): Promise<void> {
  await db.schema.createTable('outcome_import_batches', (t) => {
    t.uuid('id').primary();
    t.string('advertiser_id', 200).notNullable().references('workspaces.id').onDelete('CASCADE');
    t.uuid('campaign_id').notNullable().references('campaigns.id').onDelete('CASCADE');
    t.string('format', 8).notNullable(); // json | csv
    t.integer('row_count').notNullable();
    t.integer('replaced_count').notNullable();
    t.string('content_sha256', 64).notNullable();
    t.string('imported_by', 200).notNullable();
    t.string('agent_client_id', 200);
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(db.fn.now());
    t.index(['campaign_id', 'created_at']);
  });

  await db.schema.createTable('campaign_outcomes', (t) => {
    t.bigIncrements('id');
    t.string('advertiser_id', 200).notNullable();
    t.uuid('campaign_id').notNullable().references('campaigns.id').onDelete('CASCADE');
    t.date('date').notNullable();
    t.string('market', 64).notNullable();
    t.string('metric', 64).notNullable();
    t.double('value').notNullable();
    t.uuid('batch_id').notNullable().references('outcome_import_batches.id');
    t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(db.fn.now());
    // A later import of the same day, market and metric replaces the earlier value.
    t.unique(['campaign_id', 'date', 'market', 'metric']);
  });

  await db.schema.createTable('lift_evidence', (t) => {
    t.uuid('id').primary();
    t.string('advertiser_id', 200).notNullable();
    t.uuid('campaign_id').notNullable().references('campaigns.id').onDelete('CASCADE');
    t.string('method', 64).notNullable();
    t.jsonb('design').notNullable();
    t.jsonb('result').notNullable();
    t.string('created_by', 200).notNullable();
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(db.fn.now());
    t.index(['campaign_id', 'created_at']);
  });

  await db.schema.createTable('optimizations', (t) => {
    t.uuid('id').primary();
    t.string('advertiser_id', 200).notNullable();
    t.uuid('campaign_id').notNullable().references('campaigns.id').onDelete('CASCADE');
    t.string('kind', 64).notNullable();
    // What the suggestion is about (a plan line id) and the plan version it was computed from.
    t.string('subject', 200).notNullable();
    t.integer('basis_plan_version').notNullable();
    t.string('status', 16).notNullable().defaultTo('open'); // open | accepted | rejected | stale
    t.text('reason').notNullable();
    t.jsonb('figures').notNullable();
    t.jsonb('change').notNullable();
    t.string('decided_by', 200);
    t.timestamp('decided_at', { useTz: true });
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(db.fn.now());
    t.unique(['campaign_id', 'kind', 'subject', 'basis_plan_version']);
  });

  await db.schema.createTable('study_artifacts', (t) => {
    t.uuid('id').primary();
    t.string('advertiser_id', 200).notNullable();
    t.uuid('study_id').notNullable().references('brand_lift_studies.id').onDelete('CASCADE');
    t.string('purpose', 64).notNullable();
    t.string('media_type', 100).notNullable();
    t.string('sha256', 64).notNullable();
    t.integer('size_bytes').notNullable();
    t.timestamp('retain_until', { useTz: true }).notNullable();
    t.timestamp('bytes_deleted_at', { useTz: true });
    t.string('uploaded_by', 200).notNullable();
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(db.fn.now());
    t.index(['study_id', 'purpose']);
    t.index(['sha256']);
    t.index(['retain_until']);
  });
}

export async function down(db: Knex): Promise<void> {
  for (const table of ['study_artifacts', 'optimizations', 'lift_evidence', 'campaign_outcomes', 'outcome_import_batches']) {
    await db.schema.dropTableIfExists(table);
  }
}
