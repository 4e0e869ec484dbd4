import type { Knex } from 'knex';

/** Identity cohorts built from a campaign's exposure, and their supplier sync attempts (docs/audiences.md). */
export async function up(db: Knex): Promise<void> {
  await db.schema.createTable('identity_cohorts', (t) => {
    t.uuid('id').primary();
    t.string('advertiser_id', 200).notNullable().references('workspaces.id').onDelete('CASCADE');
    t.uuid('campaign_id').notNullable().references('campaigns.id').onDelete('CASCADE');
    // { exposedOn, notExposedOn, channel, purpose, adapterKey, executionMode }: exactly what was asked for.
    t.jsonb('definition').notNullable();
    // bigint: identities come from budgets in minor units, which may pass 2^31 / 10.
    t.bigInteger('estimated_size').notNullable();
    // 1 at creation with its first attempt; +1 on every later attempt and every resolution.
    t.integer('revision').notNullable().defaultTo(1);
    t.string('state', 32).notNullable(); // syncing | synced | rejected | needs-resolution | discarded
    t.string('created_by', 400).notNullable();
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(db.fn.now());
    t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(db.fn.now());
    t.index(['campaign_id', 'created_at']);
    t.index(['advertiser_id', 'created_at']);
  });
  await db.raw('alter table identity_cohorts add constraint identity_cohorts_revision_positive check (revision > 0)');
  await db.raw('alter table identity_cohorts add constraint identity_cohorts_size_non_negative check (estimated_size >= 0)');

  await db.schema.createTable('cohort_sync_attempts', (t) => {
    // Also the supplier's idempotency key.
    t.uuid('id').primary();
    t.uuid('cohort_id').notNullable().references('identity_cohorts.id').onDelete('CASCADE');
    t.integer('revision').notNullable(); // the cohort revision the attempt was made at
    t.string('status', 32).notNullable(); // queued | in-flight | synced | rejected | needs-resolution | discarded
    t.string('supplier_reference', 200);
    t.jsonb('detail');
    t.jsonb('resolution');
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(db.fn.now());
    t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(db.fn.now());
    t.timestamp('started_at', { useTz: true });
    t.timestamp('finished_at', { useTz: true });
    t.index(['cohort_id', 'created_at']);
  });
  // At most one attempt of a cohort is ever open (queued or in flight): the attempt row is the truth.
  await db.raw(
    "create unique index cohort_sync_attempts_one_open on cohort_sync_attempts (cohort_id) where status in ('queued', 'in-flight')",
  );
}

export async function down(db: Knex): Promise<void> {
  await db.schema.dropTableIfExists('cohort_sync_attempts');
  await db.schema.dropTableIfExists('identity_cohorts');
}
