import type { Knex } from 'knex';

/** Agent mandates, runs, steps, approvals, execution receipts, evidence and the mission journal. */
export async function up(db: Knex): Promise<void> {
  await db.schema.createTable('agent_mandates', (t) => {
    t.string('advertiser_id', 200).notNullable().references('workspaces.id').onDelete('CASCADE');
    t.string('agent_client_id', 200).notNullable();
    t.specificType('allowed_actions', 'text[]').notNullable();
    t.bigInteger('budget_ceiling_minor').notNullable();
    t.string('currency', 3).notNullable();
    t.string('granted_by', 200).notNullable();
    t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(db.fn.now());
    t.primary(['advertiser_id', 'agent_client_id']);
  });

  await db.schema.createTable('agent_runs', (t) => {
    t.uuid('id').primary();
    t.string('advertiser_id', 200).notNullable().references('workspaces.id').onDelete('CASCADE');
    t.string('user_id', 200).notNullable();
    t.string('agent_client_id', 200);
    t.string('action_name', 120).notNullable();
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(db.fn.now());
    t.index(['advertiser_id', 'created_at']);
  });

  await db.schema.createTable('agent_approvals', (t) => {
    t.uuid('id').primary();
    t.uuid('run_id').notNullable().references('agent_runs.id').onDelete('CASCADE');
    t.string('advertiser_id', 200).notNullable();
    t.string('user_id', 200).notNullable();
    t.string('agent_client_id', 200);
    t.string('action_name', 120).notNullable();
    t.jsonb('action').notNullable(); // the normalised { name, parameters, budgetMinor, currency }
    t.string('action_digest', 64).notNullable();
    t.jsonb('commitment').notNullable();
    t.string('status', 16).notNullable(); // pending | approved | abandoned
    t.string('decided_by', 200);
    t.timestamp('decided_at', { useTz: true });
    t.text('note');
    t.uuid('execute_step_id');
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(db.fn.now());
  });

  await db.schema.createTable('agent_steps', (t) => {
    t.uuid('id').primary();
    t.uuid('run_id').notNullable().references('agent_runs.id').onDelete('CASCADE');
    t.string('advertiser_id', 200).notNullable();
    t.string('kind', 16).notNullable(); // prepare | execute
    // prepare: completed. execute: pending → executing → succeeded | failed | unknown → resolved; or abandoned.
    t.string('status', 16).notNullable();
    t.uuid('approval_id');
    t.string('action_name', 120).notNullable();
    t.string('action_digest', 64).notNullable();
    t.string('agent_client_id', 200);
    t.string('user_id', 200).notNullable();
    t.jsonb('resolution');
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(db.fn.now());
    t.timestamp('started_at', { useTz: true });
    t.timestamp('finished_at', { useTz: true });
    t.index(['run_id', 'created_at']);
  });

  await db.schema.createTable('agent_receipts', (t) => {
    t.uuid('step_id').primary().references('agent_steps.id').onDelete('CASCADE');
    t.string('advertiser_id', 200).notNullable();
    t.integer('response_status').notNullable();
    t.jsonb('response_body');
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(db.fn.now());
  });

  await db.schema.createTable('agent_evidence', (t) => {
    t.uuid('id').primary();
    t.uuid('run_id').notNullable().references('agent_runs.id').onDelete('CASCADE');
    t.uuid('step_id');
    t.string('kind', 120).notNullable();
    t.string('source', 500).notNullable();
    t.jsonb('content').notNullable();
    t.timestamp('observed_at', { useTz: true });
    t.string('recorded_by', 400).notNullable();
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(db.fn.now());
    t.index(['run_id', 'created_at']);
  });

  await db.schema.createTable('mission_journal', (t) => {
    t.bigIncrements('seq');
    t.string('advertiser_id', 200).notNullable();
    t.uuid('run_id').notNullable();
    t.uuid('approval_id');
    t.string('entry_type', 60).notNullable();
    t.jsonb('entry').notNullable(); // secrets and large payloads held as digests
    t.string('actor_id', 400).notNullable();
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(db.fn.now());
    t.index(['run_id', 'seq']);
  });
}

export async function down(db: Knex): Promise<void> {
  for (const table of [
    'mission_journal',
    'agent_evidence',
    'agent_receipts',
    'agent_steps',
    'agent_approvals',
    'agent_runs',
    'agent_mandates',
  ]) {
    await db.schema.dropTableIfExists(table);
  }
}
