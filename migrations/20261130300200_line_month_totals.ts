import type { Knex } from 'knex';

/**
 * What a seller's statement reads instead of every day, close, invoice line and ledger entry of
 * its lines (docs/billing.md, Statements): per line and month (`line_month_totals`), the delivered
 * spend and impressions, final and provisional apart, the month's figures as it closed, and its
 * invoice line's amount; per line (`line_money_totals`), the spend captured and the fees on it.
 * Statement-level triggers keep them in the transaction that writes the rows, whichever path
 * writes them (the poller, a staff entry, finality, closing, an import, the ledger), so they
 * always equal the rows they follow. Existing rows are summed once here.
 */
export async function up(db: Knex): Promise<void> {
  await db.schema.createTable('line_month_totals', (t) => {
    t.uuid('line_id').notNullable().references('booking_lines.id').onDelete('CASCADE');
    t.string('period', 7).notNullable();
    t.string('advertiser_id', 200).notNullable();
    t.string('adapter_key', 100).notNullable();
    t.bigInteger('final_minor').notNullable().defaultTo(0);
    t.bigInteger('final_impressions').notNullable().defaultTo(0);
    t.bigInteger('provisional_minor').notNullable().defaultTo(0);
    t.bigInteger('provisional_impressions').notNullable().defaultTo(0);
    // The month's close (delivery_month_closes), as it closed.
    t.boolean('closed').notNullable().defaultTo(false);
    t.bigInteger('closed_final_minor');
    t.bigInteger('closed_final_impressions');
    t.bigInteger('closed_billable_minor');
    t.bigInteger('closed_billable_before_minor');
    // The month's invoice line, if one arrived (one at most: invoice_lines_billed_once).
    t.uuid('invoice_line_id');
    t.bigInteger('invoiced_minor').notNullable().defaultTo(0);
    t.primary(['line_id', 'period']);
    t.index(['advertiser_id', 'adapter_key', 'period']);
  });
  // Every delivery batch, close and import updates rows in place: room on the page keeps the updates heap-only.
  await db.raw('alter table line_month_totals set (fillfactor = 50)');
  await db.schema.createTable('line_money_totals', (t) => {
    t.uuid('line_id').notNullable();
    t.string('advertiser_id', 200).notNullable();
    // Captures less their reversals, and management fees less their credits.
    t.bigInteger('captured_minor').notNullable().defaultTo(0);
    t.bigInteger('fees_minor').notNullable().defaultTo(0);
    t.primary(['advertiser_id', 'line_id']);
  });

  // Signed contributions of changed days, summed per line and month and added in line order
  // (concurrent writers lock the totals in the same order). A deleted line's totals went with it.
  const add = (rows: string) => `
    insert into line_month_totals as t (line_id, period, advertiser_id, adapter_key,
      final_minor, final_impressions, provisional_minor, provisional_impressions)
    select c.line_id, c.period, l.advertiser_id, l.adapter_key, c.fm, c.fi, c.pm, c.pi
      from (select line_id, to_char(day, 'YYYY-MM') as period,
                   coalesce(sum(sign * spend_minor) filter (where final_at is not null), 0) as fm,
                   coalesce(sum(sign * impressions) filter (where final_at is not null), 0) as fi,
                   coalesce(sum(sign * spend_minor) filter (where final_at is null), 0) as pm,
                   coalesce(sum(sign * impressions) filter (where final_at is null), 0) as pi
              from (${rows}) r group by 1, 2) c
      join booking_lines l on l.id = c.line_id
     order by c.line_id, c.period
    on conflict (line_id, period) do update set
      final_minor = t.final_minor + excluded.final_minor, final_impressions = t.final_impressions + excluded.final_impressions,
      provisional_minor = t.provisional_minor + excluded.provisional_minor,
      provisional_impressions = t.provisional_impressions + excluded.provisional_impressions`;
  const cols = 'line_id, day, spend_minor, impressions, final_at';
  await db.raw(`create function line_month_totals_insert() returns trigger language plpgsql as $$ begin
    ${add(`select ${cols}, 1::bigint as sign from new_days`)};
    return null; end $$`);
  await db.raw(`create function line_month_totals_update() returns trigger language plpgsql as $$ begin
    ${add(`select ${cols}, 1::bigint as sign from new_days union all select ${cols}, -1::bigint from old_days`)};
    return null; end $$`);
  await db.raw(`create function line_month_totals_delete() returns trigger language plpgsql as $$ begin
    ${add(`select ${cols}, -1::bigint as sign from old_days`)};
    return null; end $$`);
  // The inserts of an upsert are in the insert trigger's rows, its updates in the update trigger's.
  await db.raw(`create trigger line_month_totals_insert after insert on delivery_days
    referencing new table as new_days for each statement execute function line_month_totals_insert()`);
  await db.raw(`create trigger line_month_totals_update after update on delivery_days
    referencing old table as old_days new table as new_days for each statement execute function line_month_totals_update()`);
  await db.raw(`create trigger line_month_totals_delete after delete on delivery_days
    referencing old table as old_days for each statement execute function line_month_totals_delete()`);

  // Wallet entries are append-only: inserts are all there is to follow.
  await db.raw(`create function line_money_totals_insert() returns trigger language plpgsql as $$ begin
    insert into line_money_totals as t (line_id, advertiser_id, captured_minor, fees_minor)
    select line_id, advertiser_id,
           sum(case kind when 'capture' then amount_minor when 'capture_reversal' then -amount_minor else 0 end),
           sum(case kind when 'management_fee' then amount_minor when 'fee_credit' then -amount_minor else 0 end)
      from new_entries
     where line_id is not null and kind in ('capture', 'capture_reversal', 'management_fee', 'fee_credit')
     group by line_id, advertiser_id
     order by line_id, advertiser_id
    on conflict (advertiser_id, line_id) do update set
      captured_minor = t.captured_minor + excluded.captured_minor, fees_minor = t.fees_minor + excluded.fees_minor;
    return null; end $$`);
  await db.raw(`create trigger line_money_totals_insert after insert on wallet_entries
    referencing new table as new_entries for each statement execute function line_money_totals_insert()`);

  // A month's close: its figures as it closed (a close is only ever removed to close the month again).
  await db.raw(`create function line_month_totals_close() returns trigger language plpgsql as $$ begin
    insert into line_month_totals as t (line_id, period, advertiser_id, adapter_key, closed, closed_final_minor,
      closed_final_impressions, closed_billable_minor, closed_billable_before_minor)
    select line_id, period, advertiser_id, adapter_key, true, final_minor, final_impressions, billable_minor, billable_before_minor
      from new_closes order by line_id, period
    on conflict (line_id, period) do update set closed = true, closed_final_minor = excluded.closed_final_minor,
      closed_final_impressions = excluded.closed_final_impressions, closed_billable_minor = excluded.closed_billable_minor,
      closed_billable_before_minor = excluded.closed_billable_before_minor;
    return null; end $$`);
  await db.raw(`create function line_month_totals_reopen() returns trigger language plpgsql as $$ begin
    update line_month_totals t set closed = false, closed_final_minor = null, closed_final_impressions = null,
      closed_billable_minor = null, closed_billable_before_minor = null
      from old_closes o where t.line_id = o.line_id and t.period = o.period;
    return null; end $$`);
  await db.raw(`create trigger line_month_totals_close after insert on delivery_month_closes
    referencing new table as new_closes for each statement execute function line_month_totals_close()`);
  await db.raw(`create trigger line_month_totals_reopen after delete on delivery_month_closes
    referencing old table as old_closes for each statement execute function line_month_totals_reopen()`);

  // An invoice line: its amount against its line's month (taken off first when it changes or goes).
  const unbill = (rows: string) => `update line_month_totals t set invoice_line_id = null, invoiced_minor = 0
    from ${rows} o where t.line_id = o.line_id and t.period = o.period and t.invoice_line_id = o.id`;
  const bill = (
    rows: string,
  ) => `insert into line_month_totals as t (line_id, period, advertiser_id, adapter_key, invoice_line_id, invoiced_minor)
    select i.line_id, i.period, l.advertiser_id, l.adapter_key, i.id, i.amount_minor
      from ${rows} i join booking_lines l on l.id = i.line_id order by i.line_id, i.period
    on conflict (line_id, period) do update set invoice_line_id = excluded.invoice_line_id, invoiced_minor = excluded.invoiced_minor`;
  await db.raw(`create function line_month_totals_bill() returns trigger language plpgsql as $$ begin
    ${bill('new_lines')}; return null; end $$`);
  await db.raw(`create function line_month_totals_rebill() returns trigger language plpgsql as $$ begin
    ${unbill('old_lines')}; ${bill('new_lines')}; return null; end $$`);
  await db.raw(`create function line_month_totals_unbill() returns trigger language plpgsql as $$ begin
    ${unbill('old_lines')}; return null; end $$`);
  await db.raw(`create trigger line_month_totals_bill after insert on invoice_lines
    referencing new table as new_lines for each statement execute function line_month_totals_bill()`);
  await db.raw(`create trigger line_month_totals_rebill after update on invoice_lines
    referencing old table as old_lines new table as new_lines for each statement execute function line_month_totals_rebill()`);
  await db.raw(`create trigger line_month_totals_unbill after delete on invoice_lines
    referencing old table as old_lines for each statement execute function line_month_totals_unbill()`);

  await db.raw(`insert into line_month_totals (line_id, period, advertiser_id, adapter_key,
      final_minor, final_impressions, provisional_minor, provisional_impressions)
    select d.line_id, to_char(d.day, 'YYYY-MM'), l.advertiser_id, l.adapter_key,
           coalesce(sum(d.spend_minor) filter (where d.final_at is not null), 0),
           coalesce(sum(d.impressions) filter (where d.final_at is not null), 0),
           coalesce(sum(d.spend_minor) filter (where d.final_at is null), 0),
           coalesce(sum(d.impressions) filter (where d.final_at is null), 0)
      from delivery_days d join booking_lines l on l.id = d.line_id
     group by d.line_id, to_char(d.day, 'YYYY-MM'), l.advertiser_id, l.adapter_key`);
  await db.raw(`insert into line_month_totals as t (line_id, period, advertiser_id, adapter_key, closed, closed_final_minor,
      closed_final_impressions, closed_billable_minor, closed_billable_before_minor)
    select line_id, period, advertiser_id, adapter_key, true, final_minor, final_impressions, billable_minor, billable_before_minor
      from delivery_month_closes
    on conflict (line_id, period) do update set closed = true, closed_final_minor = excluded.closed_final_minor,
      closed_final_impressions = excluded.closed_final_impressions, closed_billable_minor = excluded.closed_billable_minor,
      closed_billable_before_minor = excluded.closed_billable_before_minor`);
  await db.raw(`insert into line_month_totals as t (line_id, period, advertiser_id, adapter_key, invoice_line_id, invoiced_minor)
    select i.line_id, i.period, l.advertiser_id, l.adapter_key, i.id, i.amount_minor
      from invoice_lines i join booking_lines l on l.id = i.line_id
    on conflict (line_id, period) do update set invoice_line_id = excluded.invoice_line_id, invoiced_minor = excluded.invoiced_minor`);
  await db.raw(`insert into line_money_totals (line_id, advertiser_id, captured_minor, fees_minor)
    select line_id, advertiser_id,
           sum(case kind when 'capture' then amount_minor when 'capture_reversal' then -amount_minor else 0 end),
           sum(case kind when 'management_fee' then amount_minor when 'fee_credit' then -amount_minor else 0 end)
      from wallet_entries
     where line_id is not null and kind in ('capture', 'capture_reversal', 'management_fee', 'fee_credit')
     group by line_id, advertiser_id`);
}

export async function down(db: Knex): Promise<void> {
  for (const [table, ops] of [
    ['delivery_month_closes', ['close', 'reopen']],
    ['invoice_lines', ['bill', 'rebill', 'unbill']],
  ] as const) {
    for (const op of ops) {
      await db.raw(`drop trigger if exists line_month_totals_${op} on ${table}`);
      await db.raw(`drop function if exists line_month_totals_${op}()`);
    }
  }
  await db.raw('drop trigger if exists line_money_totals_insert on wallet_entries');
  await db.raw('drop function if exists line_money_totals_insert()');
  for (const op of ['insert', 'update', 'delete']) {
    await db.raw(`drop trigger if exists line_month_totals_${op} on delivery_days`);
    await db.raw(`drop function if exists line_month_totals_${op}()`);
  }
  await db.schema.dropTableIfExists('line_money_totals');
  await db.schema.dropTableIfExists('line_month_totals');
}
