import type { Knex } from 'knex';

/**
 * The booking-status rule as a database function, so the statement that changes a line sets
 * its booking's status too (one statement, no second round trip under the booking's lock):
 * all queued → queued; any other open line → in-progress (stopping while only stops are
 * open); all confirmed → confirmed; all rejected → rejected; all stopped → stopped; some
 * confirmed and the rest rejected or stopped → partially-confirmed; only rejected and stopped
 * → stopped. NULL for counts that cannot be right (an unknown status, a negative or
 * fractional count): the caller counts the lines again.
 *
 * `assert_line_step` aborts the statement it is part of, for a condition that must hold.
 */
export async function up(db: Knex): Promise<void> {
  // PL/pgSQL with simple expressions only: each session plans them once, not on every call.
  await db.raw(`
    create or replace function booking_status_of(counts jsonb) returns text
    language plpgsql immutable parallel safe as $fn$
    declare
      statuses constant text[] := array['queued', 'in-progress', 'confirmed', 'rejected',
                                        'reconciliation-required', 'stop-requested', 'stopping', 'stopped'];
      n numeric[] := array[0, 0, 0, 0, 0, 0, 0, 0];
      v jsonb;
      total numeric;
    begin
      counts := coalesce(counts, '{}'::jsonb);
      if jsonb_typeof(counts) <> 'object' or (counts - statuses) <> '{}'::jsonb then
        return null;
      end if;
      for i in 1..8 loop
        v := counts -> statuses[i];
        if v is not null then
          if jsonb_typeof(v) <> 'number' then return null; end if;
          n[i] := v::text::numeric;
          if n[i] < 0 or n[i] <> trunc(n[i]) then return null; end if;
        end if;
      end loop;
      -- queued, in-progress, confirmed, rejected, reconciliation-required, stop-requested, stopping, stopped
      total := n[1] + n[2] + n[3] + n[4] + n[5] + n[6] + n[7] + n[8];
      if total = 0 or n[1] = total then return 'queued'; end if;
      if n[1] + n[2] + n[5] + n[6] + n[7] > 0 then
        return case when n[1] + n[2] + n[5] = 0 then 'stopping' else 'in-progress' end;
      end if;
      if n[3] = total then return 'confirmed'; end if;
      if n[4] = total then return 'rejected'; end if;
      if n[8] = total then return 'stopped'; end if;
      if n[3] > 0 then return 'partially-confirmed'; end if;
      return case when n[8] > 0 then 'stopped' else 'rejected' end;
    end
    $fn$`);
  await db.raw(`
    create or replace function assert_line_step(ok boolean, message text) returns boolean
    language plpgsql as $fn$
    begin
      if not coalesce(ok, false) then
        raise exception using errcode = 'FD001', message = message;
      end if;
      return true;
    end
    $fn$`);
}

export async function down(db: Knex): Promise<void> {
  await db.raw('drop function if exists assert_line_step(boolean, text)');
  await db.raw('drop function if exists booking_status_of(jsonb)');
}
