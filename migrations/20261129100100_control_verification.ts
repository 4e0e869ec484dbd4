import type { Knex } from 'knex';

/**
 * In-flight changes are proven by delivery, not taken on the seller's word (docs/bookings.md,
 * "Verified control"). Each applied pause, resume, stop and budget or end-date change records
 * when it took effect, on the clock its line's delivery is dated by (a sandbox workspace's clock
 * for a sandbox line): one trigger, so every path that settles an operation (the supplier's
 * answer, a batch of sandbox lines, staff, a resolution) records it alike. Pauses, stops and
 * budget changes then wait for verification: `pending` until delivery proves them, `verified`,
 * `failed` (delivery or the read-back disagreed), or `superseded` (a resume came before a full
 * day could show the pause).
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('line_operations', (t) => {
    t.timestamp('effective_at', { useTz: true });
    t.string('verification', 16);
    t.integer('verification_version').notNullable().defaultTo(0);
    t.jsonb('verification_evidence');
    t.timestamp('verification_decided_at', { useTz: true });
  });
  await knex.raw(`alter table line_operations add constraint line_operations_verification
    check (verification in ('pending', 'verified', 'failed', 'superseded'))`);
  // What the verification sweep reads: operations still watched.
  await knex.raw(`create index line_operations_watched on line_operations (line_id) where verification in ('pending', 'verified')`);
  await knex.raw(`
    create function line_operation_took_effect() returns trigger language plpgsql as $$
    begin
      if new.status = 'applied' and old.status is distinct from 'applied' then
        new.effective_at := now() + make_interval(days => coalesce((
          select sc.offset_days from booking_lines l join sandbox_clocks sc on sc.advertiser_id = l.advertiser_id
           where l.id = new.line_id and l.execution_mode = 'sandbox'), 0));
        if new.kind in ('pause', 'stop', 'change-budget') then
          new.verification := 'pending';
          new.verification_version := new.verification_version + 1;
        end if;
      end if;
      return new;
    end $$`);
  await knex.raw(`create trigger line_operation_took_effect before update of status on line_operations
    for each row execute function line_operation_took_effect()`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('drop trigger if exists line_operation_took_effect on line_operations');
  await knex.raw('drop function if exists line_operation_took_effect()');
  await knex.schema.alterTable('line_operations', (t) => {
    t.dropColumn('effective_at');
    t.dropColumn('verification');
    t.dropColumn('verification_version');
    t.dropColumn('verification_evidence');
    t.dropColumn('verification_decided_at');
  });
}
