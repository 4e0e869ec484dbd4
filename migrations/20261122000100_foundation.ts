import type { Knex } from 'knex';

/** Workspaces, staff, idempotency records, assets, pixel events and supplier credentials. */
export async function up(db: Knex): Promise<void> {
  await db.schema.createTable('workspaces', (t) => {
    t.string('id', 200).primary(); // the token's org_id
    t.string('name', 200).notNullable();
    t.string('pixel_key', 128).notNullable().unique();
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(db.fn.now());
  });

  await db.schema.createTable('staff_members', (t) => {
    t.string('user_id', 200).primary();
    t.string('display_name', 200);
    t.boolean('active').notNullable().defaultTo(true);
    t.timestamp('granted_at', { useTz: true }).notNullable().defaultTo(db.fn.now());
    t.timestamp('revoked_at', { useTz: true });
  });

  await db.schema.createTable('staff_assignments', (t) => {
    t.string('staff_user_id', 200).notNullable().references('staff_members.user_id').onDelete('CASCADE');
    t.string('advertiser_id', 200).notNullable().references('workspaces.id').onDelete('CASCADE');
    t.timestamp('assigned_at', { useTz: true }).notNullable().defaultTo(db.fn.now());
    t.primary(['staff_user_id', 'advertiser_id']);
  });

  await db.schema.createTable('idempotency_records', (t) => {
    t.bigIncrements('id');
    t.string('advertiser_id', 200).notNullable();
    t.string('caller_id', 400).notNullable();
    t.string('route', 300).notNullable();
    t.uuid('idempotency_key').notNullable();
    t.string('request_digest', 64).notNullable();
    t.string('state', 16).notNullable().defaultTo('in-flight'); // in-flight | completed
    t.integer('response_status');
    t.jsonb('response_body');
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(db.fn.now());
    t.timestamp('completed_at', { useTz: true });
    t.unique(['advertiser_id', 'caller_id', 'route', 'idempotency_key']);
    t.index(['created_at']);
  });

  await db.schema.createTable('assets', (t) => {
    t.string('name', 100).primary(); // <sha256 hex>.<ext>
    t.string('sha256', 64).notNullable();
    t.string('content_type', 100).notNullable();
    t.bigInteger('size_bytes').notNullable();
    t.string('advertiser_id', 200).references('workspaces.id').onDelete('SET NULL');
    t.string('uploaded_by', 200);
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(db.fn.now());
    t.index(['sha256']);
  });

  await db.schema.createTable('pixel_events', (t) => {
    t.bigIncrements('id');
    t.string('advertiser_id', 200).notNullable().references('workspaces.id').onDelete('CASCADE');
    t.string('pixel_key', 128).notNullable();
    t.string('idempotency_key', 200);
    t.string('kind', 64);
    t.string('event', 64);
    t.decimal('value', 12, 2);
    t.bigInteger('value_minor');
    t.string('promo_code', 64);
    t.timestamp('received_at', { useTz: true }).notNullable().defaultTo(db.fn.now());
    t.index(['advertiser_id', 'received_at']);
  });
  // The first event for a pixel and key is the one kept.
  await db.raw(
    'create unique index pixel_events_pixel_key_idempotency on pixel_events (pixel_key, idempotency_key) where idempotency_key is not null',
  );

  await db.schema.createTable('supplier_credentials', (t) => {
    t.string('adapter_key', 100).notNullable();
    t.string('advertiser_id', 200).references('workspaces.id').onDelete('CASCADE');
    t.string('status', 16).notNullable().defaultTo('active'); // active | revoked
    t.string('secret_ref', 300).notNullable(); // a reference into the secret store, never the secret
    t.timestamp('approved_at', { useTz: true });
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(db.fn.now());
    t.index(['adapter_key', 'status']);
  });
}

export async function down(db: Knex): Promise<void> {
  for (const table of [
    'supplier_credentials',
    'pixel_events',
    'assets',
    'idempotency_records',
    'staff_assignments',
    'staff_members',
    'workspaces',
  ]) {
    await db.schema.dropTableIfExists(table);
  }
}
