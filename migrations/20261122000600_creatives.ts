import type { Knex } from 'knex';

/** Creatives, their versions, supplier reviews and the approvals those reviews grant. */
export async function up(db: Knex): Promise<void> {
  await db.schema.createTable('creatives', (t) => {
    t.uuid('id').primary();
    t.string('advertiser_id', 200).notNullable().references('workspaces.id').onDelete('CASCADE');
    t.uuid('campaign_id').references('campaigns.id').onDelete('SET NULL');
    t.string('name', 200).notNullable();
    t.string('channel', 16).notNullable();
    t.string('format', 100).notNullable();
    t.integer('current_version').notNullable().defaultTo(1);
    t.string('created_by', 400).notNullable();
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(db.fn.now());
    t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(db.fn.now());
    t.index(['advertiser_id', 'created_at']);
  });

  await db.schema.createTable('creative_versions', (t) => {
    t.uuid('creative_id').notNullable().references('creatives.id').onDelete('CASCADE');
    t.integer('version').notNullable();
    t.string('asset_name', 100).notNullable().references('assets.name');
    t.string('asset_fingerprint', 71).notNullable(); // sha256:<64 hex> of the exact bytes
    t.string('content_type', 100).notNullable();
    t.text('copy_text').notNullable();
    t.jsonb('audio_delivery');
    t.jsonb('delivery').notNullable(); // headline, subline, cta, mandatories
    t.string('metadata_digest', 64).notNullable();
    t.string('created_by', 400).notNullable();
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(db.fn.now());
    t.primary(['creative_id', 'version']);
  });

  await db.schema.createTable('creative_reviews', (t) => {
    t.uuid('id').primary();
    t.uuid('creative_id').notNullable().references('creatives.id').onDelete('CASCADE');
    t.integer('version').notNullable();
    t.string('advertiser_id', 200).notNullable();
    t.string('adapter_key', 100).notNullable();
    t.string('channel', 16).notNullable();
    t.string('asset_fingerprint', 71).notNullable();
    t.string('metadata_digest', 64).notNullable();
    // queued → in-flight → approved | rejected | needs-resolution
    t.string('status', 24).notNullable().defaultTo('queued');
    t.string('attempt_id', 100);
    t.string('external_reference', 200);
    t.jsonb('reasons');
    t.string('requested_by', 400).notNullable();
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(db.fn.now());
    t.timestamp('finished_at', { useTz: true });
    t.index(['creative_id', 'version']);
  });

  await db.schema.createTable('creative_approvals', (t) => {
    t.uuid('id').primary();
    t.uuid('creative_id').notNullable().references('creatives.id').onDelete('CASCADE');
    t.integer('version').notNullable();
    t.string('adapter_key', 100).notNullable();
    t.string('asset_fingerprint', 71).notNullable();
    t.string('metadata_digest', 64).notNullable();
    t.uuid('review_id').notNullable();
    t.string('external_reference', 200);
    t.string('status', 16).notNullable().defaultTo('valid'); // valid | superseded
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(db.fn.now());
    t.index(['creative_id', 'version', 'adapter_key']);
  });
}

export async function down(db: Knex): Promise<void> {
  for (const table of ['creative_approvals', 'creative_reviews', 'creative_versions', 'creatives'])
    await db.schema.dropTableIfExists(table);
}
