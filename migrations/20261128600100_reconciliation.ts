import type { Knex } from 'knex';

/**
 * Reconciliation: the final number, the seller's invoice, disputes and make-goods.
 *
 * A delivery day becomes final (`delivery_days.final_at`) when its seller says so, when the
 * seller's finalization window has passed, or (workflow lines) when staff mark the month final.
 * A final day's figures no longer change: a seller's later figure for it is kept apart as a
 * discrepancy for a person. A line's month is closed once all its days are final
 * (`delivery_month_closes`); only a closed month can be invoiced. An invoice's lines are matched
 * to the final figures, approved or disputed; a dispute ends with one remedy, and a credit or an
 * adjustment is one ledger entry per invoice line. An `additional_delivery` remedy owes a
 * make-good that later zero-cost delivery burns down.
 */
export async function up(db: Knex): Promise<void> {
  await db.schema.alterTable('delivery_days', (t) => {
    t.timestamp('final_at', { useTz: true });
    t.string('final_source', 16); // seller | window | staff
  });
  await db.raw(`alter table delivery_days add constraint delivery_days_final check
    ((final_at is null and final_source is null) or (final_at is not null and final_source in ('seller', 'window', 'staff')))`);
  // The days that may yet become final: what the finality step looks through.
  await db.raw('create index delivery_days_provisional on delivery_days (line_id, day) where final_at is null');

  await db.schema.createTable('delivery_month_closes', (t) => {
    t.uuid('line_id').notNullable().references('booking_lines.id').onDelete('CASCADE');
    t.string('period', 7).notNullable();
    t.string('advertiser_id', 200).notNullable();
    t.uuid('booking_id').notNullable();
    t.string('adapter_key', 100).notNullable();
    // The month's last day of the flight: days after it (a make-good run after the flight) are not closed.
    t.date('last_day').notNullable();
    // The month's final figures as it closed (they never change after): statements and invoices read them.
    t.bigInteger('final_minor').notNullable();
    t.bigInteger('final_impressions').notNullable();
    t.bigInteger('billable_minor').notNullable();
    t.bigInteger('billable_before_minor').notNullable();
    t.string('closed_by', 16).notNullable(); // seller | window | staff
    t.string('actor_id', 400).notNullable();
    t.timestamp('closed_at', { useTz: true }).notNullable().defaultTo(db.fn.now());
    t.primary(['line_id', 'period']);
    t.index(['advertiser_id', 'adapter_key', 'period']);
  });

  await db.schema.createTable('delivery_discrepancies', (t) => {
    t.uuid('id').primary();
    t.string('advertiser_id', 200).notNullable();
    t.uuid('line_id').notNullable().references('booking_lines.id').onDelete('CASCADE');
    t.uuid('booking_id').notNullable();
    t.string('adapter_key', 100).notNullable();
    t.date('day').notNullable();
    for (const side of ['final', 'reported']) {
      t.bigInteger(`${side}_impressions`).notNullable();
      t.bigInteger(`${side}_clicks`).notNullable();
      t.bigInteger(`${side}_completions`).notNullable();
      t.bigInteger(`${side}_spend_minor`).notNullable();
    }
    t.string('reported_by', 16).notNullable(); // supplier | staff
    t.timestamp('reported_as_of', { useTz: true }).notNullable();
    t.timestamp('detected_at', { useTz: true }).notNullable().defaultTo(db.fn.now());
    t.string('status', 16).notNullable().defaultTo('open'); // open | acknowledged
    t.string('acknowledged_by', 400);
    t.timestamp('acknowledged_at', { useTz: true });
    t.string('note', 2000);
    t.index(['advertiser_id', 'status']);
  });
  // The same restated figure reported again is the same discrepancy.
  await db.raw(`create unique index delivery_discrepancies_once on delivery_discrepancies
    (line_id, day, reported_impressions, reported_clicks, reported_completions, reported_spend_minor)`);

  await db.schema.createTable('invoices', (t) => {
    t.uuid('id').primary();
    t.string('advertiser_id', 200).notNullable();
    t.string('adapter_key', 100).notNullable();
    t.string('invoice_number', 100).notNullable();
    t.string('period', 7).notNullable();
    t.string('currency', 3).notNullable();
    t.string('format', 8).notNullable(); // json | csv
    t.string('content_sha256', 64).notNullable();
    t.integer('line_count').notNullable();
    t.bigInteger('invoiced_minor').notNullable();
    t.bigInteger('invoiced_impressions').notNullable();
    t.bigInteger('final_minor').notNullable();
    t.bigInteger('final_impressions').notNullable();
    t.decimal('max_variance_percent', 6, 3).notNullable();
    t.string('status', 16).notNullable(); // approved | disputed | resolved
    t.integer('version').notNullable().defaultTo(1);
    t.string('imported_by', 400).notNullable();
    t.timestamp('imported_at', { useTz: true }).notNullable().defaultTo(db.fn.now());
    t.unique(['advertiser_id', 'adapter_key', 'invoice_number']);
    t.index(['advertiser_id', 'period']);
  });

  await db.schema.createTable('invoice_lines', (t) => {
    t.uuid('id').primary();
    t.uuid('invoice_id').notNullable().references('invoices.id').onDelete('CASCADE');
    t.string('advertiser_id', 200).notNullable();
    t.string('period', 7).notNullable();
    t.integer('row_number').notNullable();
    t.uuid('line_id').notNullable().references('booking_lines.id');
    t.uuid('booking_id').notNullable();
    t.string('buy_id', 200);
    t.string('package_id', 200);
    t.bigInteger('impressions').notNullable();
    t.bigInteger('amount_minor').notNullable();
    t.bigInteger('final_impressions').notNullable();
    t.bigInteger('final_minor').notNullable();
    t.string('status', 16).notNullable(); // approved | disputed | resolved
    t.string('remedy', 24); // credit | invoice_adjustment | additional_delivery | accepted
    t.bigInteger('remedy_amount_minor');
    t.string('reason', 2000);
    t.string('resolved_by', 400);
    t.timestamp('resolved_at', { useTz: true });
    t.bigInteger('ledger_entry_id');
    t.jsonb('evidence');
    t.integer('version').notNullable().defaultTo(1);
    t.unique(['invoice_id', 'row_number']);
    t.index(['advertiser_id', 'status']);
  });
  // A line's month is billed once: a second invoice for it is refused, not paid twice.
  await db.raw('create unique index invoice_lines_billed_once on invoice_lines (line_id, period)');
  await db.raw(`alter table invoice_lines add constraint invoice_lines_state check
    ((status in ('approved', 'disputed') and remedy is null) or (status = 'resolved' and remedy is not null))`);

  await db.schema.createTable('makegoods', (t) => {
    t.uuid('id').primary();
    t.string('advertiser_id', 200).notNullable();
    t.uuid('invoice_line_id').notNullable().unique().references('invoice_lines.id');
    t.uuid('line_id').notNullable().references('booking_lines.id');
    t.uuid('booking_id').notNullable();
    t.string('adapter_key', 100).notNullable();
    t.bigInteger('owed_impressions').notNullable();
    t.bigInteger('owed_value_minor');
    t.bigInteger('delivered_impressions').notNullable().defaultTo(0);
    t.date('from_day').notNullable();
    t.date('due_by').notNullable();
    t.string('status', 16).notNullable().defaultTo('owed'); // owed | fulfilled | expired
    t.integer('version').notNullable().defaultTo(1);
    t.string('created_by', 400).notNullable();
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(db.fn.now());
    t.timestamp('fulfilled_at', { useTz: true });
    t.timestamp('expired_at', { useTz: true });
    t.index(['advertiser_id', 'status']);
  });
  await db.raw("create index makegoods_owed on makegoods (line_id) where status = 'owed'");

  await db.raw('alter table wallet_entries drop constraint wallet_entries_kind');
  await db.raw(`alter table wallet_entries add constraint wallet_entries_kind check (kind in
    ('funding_credit', 'reservation', 'release', 'capture', 'capture_reversal', 'management_fee', 'fee_credit',
     'platform_fee', 'asset_charge', 'adjustment', 'seller_credit', 'invoice_adjustment'))`);
  // A dispute's remedy moves money once: one entry per invoice line, whatever the remedy.
  await db.raw(`create unique index wallet_entries_remedy_once on wallet_entries (subject_type, subject_id)
    where subject_type = 'invoice_line'`);
}

export async function down(db: Knex): Promise<void> {
  await db.raw('drop index if exists wallet_entries_remedy_once');
  await db.raw('alter table wallet_entries drop constraint wallet_entries_kind');
  await db.raw(`alter table wallet_entries add constraint wallet_entries_kind check (kind in
    ('funding_credit', 'reservation', 'release', 'capture', 'capture_reversal', 'management_fee', 'fee_credit',
     'platform_fee', 'asset_charge', 'adjustment'))`);
  await db.schema.dropTableIfExists('makegoods');
  await db.schema.dropTableIfExists('invoice_lines');
  await db.schema.dropTableIfExists('invoices');
  await db.schema.dropTableIfExists('delivery_discrepancies');
  await db.schema.dropTableIfExists('delivery_month_closes');
  await db.raw('drop index if exists delivery_days_provisional');
  await db.raw('alter table delivery_days drop constraint delivery_days_final');
  await db.schema.alterTable('delivery_days', (t) => {
    t.dropColumn('final_source');
    t.dropColumn('final_at');
  });
}
