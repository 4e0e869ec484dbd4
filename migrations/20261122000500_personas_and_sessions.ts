import type { Knex } from 'knex';

/** Persona extraction requests and their personas; buyer sessions. */
export async function up(db: Knex): Promise<void> {
  // The brief waits here, not in Redis: job data carries ids only.
  await db.schema.createTable('persona_requests', (t) => {
    t.uuid('id').primary();
    t.string('advertiser_id', 200).notNullable().references('workspaces.id').onDelete('CASCADE');
    t.string('requested_by', 400).notNullable();
    t.text('brief').notNullable();
    t.string('status', 16).notNullable().defaultTo('queued'); // queued | done
    t.uuid('persona_id');
    t.jsonb('generation');
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(db.fn.now());
  });

  await db.schema.createTable('personas', (t) => {
    t.uuid('id').primary();
    t.string('advertiser_id', 200).notNullable().references('workspaces.id').onDelete('CASCADE');
    t.uuid('request_id').unique(); // one persona per extraction request, however often its job runs
    t.integer('version').notNullable().defaultTo(1);
    t.string('name', 200).notNullable();
    t.text('nl_description').notNullable();
    t.jsonb('semantic_core').notNullable();
    t.jsonb('confidence').notNullable();
    t.jsonb('generation').notNullable();
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(db.fn.now());
    t.index(['advertiser_id', 'created_at']);
  });

  await db.schema.createTable('buyer_sessions', (t) => {
    t.uuid('id').primary();
    t.string('advertiser_id', 200).notNullable().references('workspaces.id').onDelete('CASCADE');
    t.string('user_id', 200).notNullable();
    t.string('agent_client_id', 200);
    t.string('workflow', 32).notNullable();
    t.jsonb('context').notNullable();
    t.integer('revision').notNullable().defaultTo(1);
    t.uuid('active_turn_id');
    t.string('status', 16).notNullable().defaultTo('idle');
    t.jsonb('messages').notNullable().defaultTo('[]');
    t.jsonb('history').notNullable().defaultTo('[]');
    t.jsonb('product_scope').notNullable();
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(db.fn.now());
    t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(db.fn.now());
  });
}

export async function down(db: Knex): Promise<void> {
  for (const table of ['buyer_sessions', 'personas', 'persona_requests']) await db.schema.dropTableIfExists(table);
}
