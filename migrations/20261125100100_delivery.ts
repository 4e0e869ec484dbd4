import type { Knex } from 'knex';

/**
 * Delivery: what each booked line delivered, day by day. `delivery_days` holds a day's latest
 * figures; every figure that ever changed is kept in `delivery_revisions` (suppliers restate a
 * day for several days after it). `delivery_fetches` says when a line's figures were last asked
 * for and last answered, so an outage shows their age instead of inventing figures.
 * `sandbox_clocks` moves a workspace's sandbox "now" forward (a test clock).
 *
 * Money follows delivery: a line's captured spend tracks its delivered spend, so a restatement
 * down gives money back (`capture_reversal`, and the fee on it as `fee_credit`), and closeout
 * releases what the flight never spent. Each delivery movement is keyed by the line and its
 * sequence number, so one figure moves money once.
 */
export async function up(db: Knex): Promise<void> {
  await db.schema.createTable('delivery_days', (t) => {
    t.uuid('line_id').notNullable().references('booking_lines.id').onDelete('CASCADE');
    t.date('day').notNullable();
    t.string('advertiser_id', 200).notNullable();
    t.uuid('booking_id').notNullable();
    t.bigInteger('impressions').notNullable();
    t.bigInteger('clicks').notNullable();
    t.bigInteger('completions').notNullable();
    t.bigInteger('spend_minor').notNullable();
    t.integer('revision').notNullable().defaultTo(1);
    t.string('source', 16).notNullable(); // supplier | staff
    t.string('entered_by', 400);
    t.timestamp('as_of', { useTz: true }).notNullable();
    t.timestamp('recorded_at', { useTz: true }).notNullable().defaultTo(db.fn.now());
    t.primary(['line_id', 'day']);
    t.index(['booking_id']);
  });
  await db.raw(`alter table delivery_days add constraint delivery_days_figures check
    (impressions >= 0 and clicks >= 0 and completions >= 0 and spend_minor >= 0)`);

  await db.schema.createTable('delivery_revisions', (t) => {
    t.bigIncrements('id');
    t.uuid('line_id').notNullable().references('booking_lines.id').onDelete('CASCADE');
    t.date('day').notNullable();
    t.integer('revision').notNullable();
    t.bigInteger('impressions').notNullable();
    t.bigInteger('clicks').notNullable();
    t.bigInteger('completions').notNullable();
    t.bigInteger('spend_minor').notNullable();
    t.string('source', 16).notNullable();
    t.string('entered_by', 400);
    t.timestamp('as_of', { useTz: true }).notNullable();
    t.timestamp('recorded_at', { useTz: true }).notNullable().defaultTo(db.fn.now());
    t.unique(['line_id', 'day', 'revision']);
  });

  await db.schema.createTable('delivery_fetches', (t) => {
    t.uuid('line_id').primary().references('booking_lines.id').onDelete('CASCADE');
    t.timestamp('attempted_at', { useTz: true }).notNullable();
    t.timestamp('succeeded_at', { useTz: true });
    t.timestamp('as_of', { useTz: true });
    t.string('last_error', 500);
    t.integer('failures').notNullable().defaultTo(0);
  });

  await db.schema.createTable('sandbox_clocks', (t) => {
    t.string('advertiser_id', 200).primary().references('workspaces.id').onDelete('CASCADE');
    t.integer('offset_days').notNullable().defaultTo(0);
    t.string('advanced_by', 400).notNullable();
    t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(db.fn.now());
  });
  await db.raw('alter table sandbox_clocks add constraint sandbox_clocks_offset check (offset_days >= 0)');

  await db.schema.alterTable('wallet_entries', (t) => {
    t.uuid('line_id');
    t.index(['line_id']);
  });
  await db.raw('alter table wallet_entries drop constraint wallet_entries_kind');
  await db.raw(`alter table wallet_entries add constraint wallet_entries_kind check (kind in
    ('funding_credit', 'reservation', 'release', 'capture', 'capture_reversal', 'management_fee', 'fee_credit',
     'platform_fee', 'asset_charge', 'adjustment'))`);
  // One movement per delivery figure of a line, and one closeout release per booking.
  await db.raw(`create unique index wallet_entries_delivery_once on wallet_entries (subject_type, subject_id)
    where subject_type = 'line_delivery'`);
  await db.raw(`create unique index wallet_entries_closeout_once on wallet_entries (booking_id)
    where kind = 'release' and subject_type = 'closeout'`);
}

export async function down(db: Knex): Promise<void> {
  await db.raw('drop index if exists wallet_entries_closeout_once');
  await db.raw('drop index if exists wallet_entries_delivery_once');
  await db.raw('alter table wallet_entries drop constraint wallet_entries_kind');
  await db.raw(`alter table wallet_entries add constraint wallet_entries_kind check (kind in
    ('funding_credit', 'reservation', 'release', 'capture', 'management_fee', 'platform_fee', 'asset_charge', 'adjustment'))`);
  await db.schema.alterTable('wallet_entries', (t) => t.dropColumn('line_id'));
  await db.schema.dropTableIfExists('sandbox_clocks');
  await db.schema.dropTableIfExists('delivery_fetches');
  await db.schema.dropTableIfExists('delivery_revisions');
  await db.schema.dropTableIfExists('delivery_days');
}
