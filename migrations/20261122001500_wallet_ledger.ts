import type { Knex } from 'knex';

/**
 * Money as an append-only ledger. Every movement of a wallet is an entry; the wallet row's
 * two columns are a cache of the entries' sums, written in the same transaction. Entries are
 * never updated or deleted: the database refuses it. Funding requests and the provider's
 * settlement events (kept as evidence) live beside them.
 */
export async function up(db: Knex): Promise<void> {
  await db.schema.createTable('wallet_entries', (t) => {
    t.bigIncrements('id');
    t.string('advertiser_id', 200).notNullable().references('workspaces.id');
    t.string('kind', 24).notNullable();
    t.bigInteger('amount_minor').notNullable();
    t.bigInteger('balance_delta_minor').notNullable();
    t.bigInteger('reserved_delta_minor').notNullable();
    t.string('currency', 3).notNullable().defaultTo('GBP');
    t.string('subject_type', 24).notNullable();
    t.string('subject_id', 200).notNullable();
    t.uuid('booking_id');
    t.string('period', 7).notNullable(); // YYYY-MM, UTC
    t.string('actor_id', 400).notNullable();
    t.jsonb('detail');
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(db.fn.now());
    t.index(['advertiser_id', 'period', 'kind']);
    t.index(['advertiser_id', 'kind', 'created_at']);
    t.index(['booking_id']);
  });
  await db.raw(`alter table wallet_entries add constraint wallet_entries_kind check (kind in
    ('funding_credit', 'reservation', 'release', 'capture', 'management_fee', 'platform_fee', 'asset_charge', 'adjustment'))`);
  await db.raw("alter table wallet_entries add constraint wallet_entries_currency check (currency = 'GBP')");
  await db.raw('alter table wallet_entries add constraint wallet_entries_amount check (amount_minor > 0)');
  // Money moves once: one credit per funding request, one capture or release per line, one reservation per holder.
  await db.raw(`create unique index wallet_entries_once on wallet_entries (kind, subject_type, subject_id)
    where kind in ('funding_credit', 'reservation', 'capture') or (kind = 'release' and subject_type = 'line')`);
  await db.raw(`create unique index wallet_entries_headroom_once on wallet_entries (booking_id)
    where kind = 'release' and subject_type = 'booking'`);
  await db.raw(`create unique index wallet_entries_platform_fee_once on wallet_entries (advertiser_id, period)
    where kind = 'platform_fee'`);
  await db.raw(`create function wallet_entries_append_only() returns trigger language plpgsql as $$
    begin raise exception 'wallet entries are append-only'; end $$`);
  await db.raw(`create trigger wallet_entries_append_only before update or delete or truncate on wallet_entries
    for each statement execute function wallet_entries_append_only()`);

  // What the wallets held before the ledger becomes their opening entries, so that balance = sum of entries.
  await db.raw(`insert into wallet_entries (advertiser_id, kind, amount_minor, balance_delta_minor, reserved_delta_minor,
      subject_type, subject_id, period, actor_id, detail)
    select advertiser_id, 'adjustment', balance_minor, balance_minor, 0, 'wallet', advertiser_id,
      to_char(now() at time zone 'utc', 'YYYY-MM'), 'flightdeck', '{"reason":"opening balance"}'::jsonb
    from wallets where balance_minor > 0`);
  await db.raw(`insert into wallet_entries (advertiser_id, kind, amount_minor, balance_delta_minor, reserved_delta_minor,
      subject_type, subject_id, booking_id, period, actor_id, detail)
    select r.advertiser_id, 'reservation', r.amount_minor - coalesce(r.released_minor, 0), 0, r.amount_minor - coalesce(r.released_minor, 0),
      'booking', r.booking_id::text, r.booking_id, to_char(now() at time zone 'utc', 'YYYY-MM'), 'flightdeck',
      '{"reason":"opening reservation"}'::jsonb
    from wallet_reservations r where r.amount_minor - coalesce(r.released_minor, 0) > 0`);
  await db.raw(`insert into wallet_entries (advertiser_id, kind, amount_minor, balance_delta_minor, reserved_delta_minor,
      subject_type, subject_id, period, actor_id, detail)
    select s.advertiser_id, 'reservation', s.amount_minor, 0, s.amount_minor, 'study_approval', s.approval_id::text,
      to_char(now() at time zone 'utc', 'YYYY-MM'), 'flightdeck', '{"reason":"opening reservation"}'::jsonb
    from study_fund_reservations s`);

  await db.schema.createTable('funding_requests', (t) => {
    t.string('id', 68).primary(); // wtr- + 64 lowercase hex
    t.string('advertiser_id', 200).notNullable().references('workspaces.id');
    t.bigInteger('amount_minor').notNullable();
    t.string('currency', 3).notNullable();
    // created → open → processing → credited | failed | expired | mismatch
    t.string('status', 16).notNullable();
    t.string('provider', 16).notNullable();
    t.string('session_id', 255).unique();
    t.text('checkout_url');
    t.string('created_by', 400).notNullable();
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(db.fn.now());
    t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(db.fn.now());
    t.timestamp('credited_at', { useTz: true });
    t.index(['advertiser_id', 'status']);
  });

  await db.schema.createTable('funding_events', (t) => {
    t.string('id', 255).primary(); // the provider's event id: a redelivery finds it here
    t.string('request_id', 68);
    t.string('type', 100).notNullable();
    t.string('session_id', 255);
    t.string('result', 32).notNullable();
    t.jsonb('payload').notNullable();
    t.timestamp('received_at', { useTz: true }).notNullable().defaultTo(db.fn.now());
    t.index(['request_id']);
  });

  await db.schema.createTable('funding_reconciliations', (t) => {
    t.uuid('id').primary();
    t.string('request_id', 68).notNullable().references('funding_requests.id');
    t.string('session_id', 255).notNullable();
    t.string('result', 16).notNullable(); // matched | mismatched | unpaid | not-found
    t.jsonb('detail').notNullable();
    t.string('reconciled_by', 400).notNullable();
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(db.fn.now());
    t.index(['request_id']);
  });

  // The workspace overview lists the lines that need someone, newest first.
  await db.raw(`create index booking_lines_attention on booking_lines (advertiser_id, updated_at desc)
    where status in ('reconciliation-required', 'rejected', 'queued')`);
  await db.raw('create index bookings_advertiser_campaign on bookings (advertiser_id, campaign_id)');

  // Pageviews per workspace and UTC day, for days that are over (their count can no longer change).
  await db.schema.createTable('pixel_daily_counts', (t) => {
    t.string('advertiser_id', 200).notNullable();
    t.date('day').notNullable();
    t.bigInteger('pageviews').notNullable();
    t.primary(['advertiser_id', 'day']);
  });
  // Every day up to and including this one is rolled up, for every workspace.
  await db.schema.createTable('pixel_rollup_state', (t) => {
    t.smallint('id').primary();
    t.date('rolled_through').notNullable();
  });

  // The deployment's billing terms, written by each process at start from its configuration.
  await db.schema.createTable('billing_terms', (t) => {
    t.smallint('id').primary();
    t.integer('scale_trailing_months').notNullable();
    t.bigInteger('scale_threshold_minor').notNullable();
  });

  // The sandbox payment provider's own sessions (a real provider keeps these on its side).
  await db.schema.createTable('sandbox_checkout_sessions', (t) => {
    t.string('id', 255).primary();
    t.jsonb('session').notNullable();
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(db.fn.now());
  });
}

export async function down(db: Knex): Promise<void> {
  await db.schema.dropTableIfExists('sandbox_checkout_sessions');
  await db.schema.dropTableIfExists('billing_terms');
  await db.schema.dropTableIfExists('pixel_rollup_state');
  await db.schema.dropTableIfExists('pixel_daily_counts');
  await db.raw('drop index if exists bookings_advertiser_campaign');
  await db.raw('drop index if exists booking_lines_attention');
  await db.schema.dropTableIfExists('funding_reconciliations');
  await db.schema.dropTableIfExists('funding_events');
  await db.schema.dropTableIfExists('funding_requests');
  await db.schema.dropTableIfExists('wallet_entries');
  await db.raw('drop function if exists wallet_entries_append_only()');
}
