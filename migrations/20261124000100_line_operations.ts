import type { Knex } from 'knex';

/**
 * In-flight control: a booked line can be paused, resumed, stopped and have its budget changed,
 * each a supplier operation run through the attempt engine like the booking itself.
 *
 * - `operation` names the supplier operation the line's current state is about (`book` until
 *   another is requested); `operation_id` the line operation still pending, if any.
 * - `stop` says why a stopped (or stopping) line is stopped, and so whether it may run again:
 *   `pause` (may resume), `end` (final), `staged` (created paused by its supplier; may be enabled).
 * - An attempt names the queue job that carries it (`job_id`), so the stuck-attempt sweep can ask
 *   whether that job is still alive.
 * - Every operation asked of a booked line is a row of `line_operations`; its id names the queue
 *   job that carries it. Amendments change running lines' budgets (and the flight's end): one
 *   row per amendment, and a `change-budget` operation per changed line.
 */
export async function up(db: Knex): Promise<void> {
  await db.schema.alterTable('booking_lines', (t) => {
    t.string('operation', 16).notNullable().defaultTo('book');
    t.uuid('operation_id');
    t.jsonb('stop');
  });
  await db.raw(`alter table booking_lines add constraint booking_lines_operation
    check (operation in ('book', 'pause', 'resume', 'stop', 'change-budget'))`);
  // Lines already staged by a native supplier: stopped until enabled.
  await db.raw(`update booking_lines set stop = jsonb_build_object('kind', 'staged')
                 where status = 'stopped' and adapter_key = 'native-staged'`);

  await db.schema.alterTable('supplier_attempts', (t) => {
    t.string('job_id', 200);
  });

  await db.schema.createTable('booking_amendments', (t) => {
    t.uuid('id').primary();
    t.string('advertiser_id', 200).notNullable();
    t.uuid('booking_id').notNullable().references('bookings.id').onDelete('CASCADE');
    t.uuid('campaign_id').notNullable();
    t.string('status', 24).notNullable();
    t.date('end_date_from');
    t.date('end_date_to');
    t.bigInteger('increase_minor').notNullable().defaultTo(0);
    t.text('note');
    t.string('requested_by', 400).notNullable();
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(db.fn.now());
    t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(db.fn.now());
    t.index(['booking_id', 'created_at']);
    t.index(['campaign_id', 'created_at']);
  });
  await db.raw(`alter table booking_amendments add constraint booking_amendments_status
    check (status in ('in-flight', 'applied', 'partially-applied', 'refused', 'reconciliation-required'))`);

  // One row per operation asked of a line after its booking: who asked, what for, where it stands.
  await db.schema.createTable('line_operations', (t) => {
    t.uuid('id').primary();
    t.string('advertiser_id', 200).notNullable();
    t.uuid('booking_id').notNullable().references('bookings.id').onDelete('CASCADE');
    t.uuid('line_id').notNullable().references('booking_lines.id').onDelete('CASCADE');
    t.string('kind', 16).notNullable();
    t.string('status', 24).notNullable();
    t.string('from_status', 32).notNullable();
    t.jsonb('stop_before');
    t.bigInteger('budget_from_minor');
    t.bigInteger('budget_to_minor');
    t.date('end_date_to');
    t.uuid('amendment_id').references('booking_amendments.id').onDelete('CASCADE');
    t.string('attempt_id', 100);
    t.text('note');
    t.text('reason');
    t.string('requested_by', 400).notNullable();
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(db.fn.now());
    t.timestamp('settled_at', { useTz: true });
    t.index(['line_id', 'created_at']);
    t.index(['amendment_id']);
  });
  await db.raw(
    `alter table line_operations add constraint line_operations_kind check (kind in ('pause', 'resume', 'stop', 'change-budget'))`,
  );
  await db.raw(`alter table line_operations add constraint line_operations_status
    check (status in ('requested', 'in-flight', 'applied', 'refused', 'reconciliation-required'))`);
  // Requested and not yet sent: what the vanished-job sweep looks through.
  await db.raw("create index line_operations_requested on line_operations (created_at) where status = 'requested'");

  // A budget increase reserves its difference, and a refusal releases it, once per line operation.
  await db.raw('drop index wallet_entries_once');
  await db.raw(`create unique index wallet_entries_once on wallet_entries (kind, subject_type, subject_id)
    where kind in ('funding_credit', 'reservation', 'capture') or (kind = 'release' and subject_type in ('line', 'amendment_line'))`);
}

export async function down(db: Knex): Promise<void> {
  await db.raw('drop index wallet_entries_once');
  await db.raw(`create unique index wallet_entries_once on wallet_entries (kind, subject_type, subject_id)
    where kind in ('funding_credit', 'reservation', 'capture') or (kind = 'release' and subject_type = 'line')`);
  await db.schema.dropTableIfExists('line_operations');
  await db.schema.dropTableIfExists('booking_amendments');
  await db.schema.alterTable('supplier_attempts', (t) => {
    t.dropColumn('job_id');
  });
  await db.raw('alter table booking_lines drop constraint booking_lines_operation');
  await db.schema.alterTable('booking_lines', (t) => {
    t.dropColumn('operation');
    t.dropColumn('operation_id');
    t.dropColumn('stop');
  });
}
