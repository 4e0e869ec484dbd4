import type { Knex } from 'knex';

/** Campaigns, plans, bookings and their lines and events, supplier attempts, the outbox, wallets, the sandbox ledger. */
export async function up(db: Knex): Promise<void> {
  // Staff need a stable uuid (lines expose assignedToUserId as a uuid) whatever their login id looks like.
  await db.schema.alterTable('staff_members', (t) => {
    t.uuid('id').notNullable().defaultTo(db.raw('gen_random_uuid()')).unique();
  });

  await db.schema.createTable('campaigns', (t) => {
    t.uuid('id').primary();
    t.string('advertiser_id', 200).notNullable().references('workspaces.id').onDelete('CASCADE');
    t.string('name', 200).notNullable();
    t.string('client_name', 200).notNullable();
    t.date('start_date').notNullable();
    t.date('end_date').notNullable();
    t.bigInteger('budget_minor').notNullable();
    t.bigInteger('maximum_commitment_minor').notNullable();
    t.string('currency', 3).notNullable().defaultTo('GBP');
    t.specificType('channels', 'text[]').notNullable();
    t.string('execution_mode', 16).notNullable();
    t.string('status', 32).notNullable().defaultTo('draft');
    t.integer('version').notNullable().defaultTo(0);
    t.string('created_by', 200).notNullable();
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(db.fn.now());
    t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(db.fn.now());
    t.index(['advertiser_id', 'created_at']);
  });

  await db.schema.createTable('plans', (t) => {
    t.uuid('id').primary();
    t.uuid('campaign_id').notNullable().unique().references('campaigns.id').onDelete('CASCADE');
    t.string('advertiser_id', 200).notNullable();
    t.integer('version').notNullable().defaultTo(1);
    t.string('status', 16).notNullable().defaultTo('draft'); // draft | approved
    t.jsonb('lines').notNullable();
    t.jsonb('approved_snapshot');
    t.string('approved_digest', 64);
    t.string('approved_by', 200);
    t.timestamp('approved_at', { useTz: true });
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(db.fn.now());
    t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(db.fn.now());
  });

  await db.schema.createTable('bookings', (t) => {
    t.uuid('id').primary();
    t.string('advertiser_id', 200).notNullable().references('workspaces.id').onDelete('CASCADE');
    t.uuid('campaign_id').notNullable().references('campaigns.id').onDelete('CASCADE');
    t.uuid('plan_id').notNullable();
    t.string('status', 32).notNullable();
    t.integer('version').notNullable().defaultTo(0);
    t.string('execution_mode', 16).notNullable();
    t.string('snapshot_digest', 64).notNullable();
    t.jsonb('approved_snapshot').notNullable();
    t.bigInteger('media_budget_minor').notNullable();
    t.bigInteger('maximum_commitment_minor').notNullable();
    t.string('currency', 3).notNullable().defaultTo('GBP');
    t.timestamp('submitted_at', { useTz: true }).notNullable();
    t.timestamp('confirmation_due_at', { useTz: true }).notNullable();
    t.timestamp('closed_out_at', { useTz: true });
    t.string('launched_by', 200).notNullable();
    // One booking per approved snapshot: a second launch of the same snapshot finds the first.
    t.unique(['campaign_id', 'snapshot_digest']);
    t.index(['submitted_at', 'id']);
    t.index(['advertiser_id', 'status']);
  });

  await db.schema.createTable('booking_lines', (t) => {
    t.uuid('id').primary();
    t.uuid('booking_id').notNullable().references('bookings.id').onDelete('CASCADE');
    t.string('advertiser_id', 200).notNullable();
    t.uuid('plan_line_id').notNullable();
    t.integer('position').notNullable();
    t.string('channel_campaign_id', 200).notNullable();
    t.string('adapter_key', 100).notNullable();
    t.string('channel', 16).notNullable();
    t.bigInteger('budget_minor').notNullable();
    t.string('execution_mode', 16).notNullable();
    t.integer('version').notNullable().defaultTo(0);
    t.string('status', 32).notNullable();
    t.string('execution_method', 16);
    t.string('provider_reference', 200);
    t.text('evidence');
    t.string('claimed_by', 200);
    t.uuid('assigned_to_user_id');
    t.timestamp('assigned_at', { useTz: true });
    t.timestamp('started_at', { useTz: true });
    t.timestamp('confirmed_at', { useTz: true });
    t.string('provider_attempt_id', 100);
    t.jsonb('creatives').notNullable().defaultTo('[]');
    t.jsonb('workflow_steps');
    t.boolean('enableable').notNullable().defaultTo(false);
    t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(db.fn.now());
    t.index(['booking_id', 'position']);
    t.index(['adapter_key', 'status']);
  });

  await db.schema.createTable('booking_events', (t) => {
    t.bigIncrements('seq');
    t.uuid('id').notNullable().unique();
    t.uuid('booking_id').notNullable().references('bookings.id').onDelete('CASCADE');
    t.uuid('line_id');
    t.string('action', 100).notNullable();
    t.string('actor_id', 400).notNullable();
    t.string('actor', 16).notNullable(); // human | agent | system
    t.string('source', 16).notNullable(); // dev | web | mcp | system
    t.jsonb('detail');
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(db.fn.now());
    t.index(['booking_id', 'seq']);
  });

  await db.schema.createTable('supplier_attempts', (t) => {
    t.string('id', 100).primary(); // the providerAttemptId, and the supplier's idempotency key
    t.uuid('line_id').notNullable().references('booking_lines.id').onDelete('CASCADE');
    t.uuid('booking_id').notNullable();
    t.string('adapter_key', 100).notNullable();
    t.string('operation', 32).notNullable();
    t.string('status', 16).notNullable(); // open | confirmed | rejected | staged | unknown | resolved
    t.string('provider_reference', 200);
    t.jsonb('detail');
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(db.fn.now());
    t.timestamp('finished_at', { useTz: true });
    t.index(['line_id']);
  });
  // At most one open attempt per line: the attempt row is the truth about what is in flight.
  await db.raw("create unique index supplier_attempts_one_open_per_line on supplier_attempts (line_id) where status = 'open'");

  await db.schema.createTable('outbox', (t) => {
    t.bigIncrements('id');
    t.string('queue', 120).notNullable();
    t.string('job_name', 60).notNullable();
    t.string('job_id', 200).notNullable().unique();
    t.jsonb('payload').notNullable();
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(db.fn.now());
    t.timestamp('relayed_at', { useTz: true });
  });
  await db.raw('create index outbox_pending on outbox (id) where relayed_at is null');

  await db.schema.createTable('wallets', (t) => {
    t.string('advertiser_id', 200).primary().references('workspaces.id').onDelete('CASCADE');
    t.bigInteger('balance_minor').notNullable().defaultTo(0);
    t.bigInteger('reserved_minor').notNullable().defaultTo(0);
    t.string('currency', 3).notNullable().defaultTo('GBP');
    t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(db.fn.now());
  });
  await db.raw(
    'alter table wallets add constraint wallets_reserved_within_balance check (reserved_minor >= 0 and reserved_minor <= balance_minor)',
  );

  await db.schema.createTable('wallet_reservations', (t) => {
    t.uuid('booking_id').primary().references('bookings.id').onDelete('CASCADE');
    t.string('advertiser_id', 200).notNullable();
    t.bigInteger('amount_minor').notNullable();
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(db.fn.now());
  });

  await db.schema.createTable('sandbox_ledger', (t) => {
    t.bigIncrements('id');
    t.string('adapter_key', 100).notNullable();
    t.string('operation', 32).notNullable();
    t.string('idempotency_key', 100).notNullable();
    t.uuid('line_id');
    t.jsonb('request').notNullable();
    t.string('outcome', 16).notNullable();
    t.string('provider_reference', 200);
    t.timestamp('received_at', { useTz: true }).notNullable().defaultTo(db.fn.now());
    t.index(['idempotency_key']);
  });

  await db.schema.createTable('browser_jobs', (t) => {
    t.uuid('id').primary();
    t.string('advertiser_id', 200).notNullable();
    t.uuid('campaign_id').notNullable();
    t.uuid('booking_id').notNullable();
    t.uuid('line_id').notNullable();
    t.string('purpose', 16).notNullable();
    t.string('supplier_url', 2000).notNullable();
    t.string('requested_by', 200).notNullable();
    t.string('status', 16).notNullable().defaultTo('recorded');
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(db.fn.now());
  });
}

export async function down(db: Knex): Promise<void> {
  for (const table of [
    'browser_jobs',
    'sandbox_ledger',
    'wallet_reservations',
    'wallets',
    'outbox',
    'supplier_attempts',
    'booking_events',
    'booking_lines',
    'bookings',
    'plans',
    'campaigns',
  ]) {
    await db.schema.dropTableIfExists(table);
  }
  await db.schema.alterTable('staff_members', (t) => t.dropColumn('id'));
}
