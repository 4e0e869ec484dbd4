import type { Knex } from 'knex';

/**
 * Geo-lift designs, registered and power-checked before exposure, and the evaluations made
 * against them: at most one final evaluation per design.
 */
export async function up(db: Knex): Promise<void> {
  await db.schema.createTable('geo_lift_designs', (t) => {
    t.uuid('id').primary();
    t.string('advertiser_id', 200).notNullable();
    t.uuid('campaign_id').notNullable().references('campaigns.id').onDelete('CASCADE');
    t.string('status', 16).notNullable(); // registered | underpowered
    t.string('test_market', 64).notNullable();
    t.string('metric', 64).notNullable();
    t.date('exposure_start').notNullable();
    t.date('exposure_end').notNullable();
    // The request as normalised (defaults applied): a repeat of it is the same registration.
    t.jsonb('request').notNullable();
    t.jsonb('control_markets').notNullable();
    t.double('expected_lift_pct').notNullable();
    t.double('alpha').notNullable();
    t.double('power').notNullable();
    t.string('alternative', 16).notNullable();
    // The power gate and the model checks, computed on the design window.
    t.jsonb('check').notNullable();
    t.jsonb('refusal');
    t.string('registered_by', 200).notNullable();
    t.string('agent_client_id', 200);
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(db.fn.now());
    t.index(['campaign_id', 'test_market', 'metric']);
  });
  // One registered design per test market, metric and exposure start; refused attempts are kept beside it.
  await db.raw(
    `create unique index geo_lift_designs_registered_key on geo_lift_designs (campaign_id, test_market, metric, exposure_start) where status = 'registered'`,
  );

  await db.schema.alterTable('lift_evidence', (t) => {
    t.uuid('design_id').references('geo_lift_designs.id').onDelete('CASCADE');
    t.string('look', 8); // interim | final
  });
  // A design is evaluated finally once: a second final evaluation would be a second chance.
  await db.raw(`create unique index lift_evidence_one_final on lift_evidence (design_id) where look = 'final'`);
}

export async function down(db: Knex): Promise<void> {
  await db.raw('drop index if exists lift_evidence_one_final');
  await db.schema.alterTable('lift_evidence', (t) => {
    t.dropColumn('look');
    t.dropColumn('design_id');
  });
  await db.schema.dropTableIfExists('geo_lift_designs');
}
