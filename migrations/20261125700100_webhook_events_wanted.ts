import type { Knex } from 'knex';

/**
 * A webhook event is kept only when a subscription wants it. Events are read only through their
 * deliveries (sending, inspection, redelivery), so one that no enabled subscription of its
 * workspace wants was a row no one would ever read, written with every line move: a fifth of what
 * PostgreSQL spent on a line step, and most of the events table for workspaces that subscribe to
 * nothing. `webhook_wanted` is the one test; the booking-event trigger asks it before building
 * the event's body.
 */
const WANTED = `
  create function webhook_wanted(p_workspace text, p_type text) returns boolean language sql stable as $$
    select exists (select 1 from webhook_subscriptions s
                    where s.workspace_id = p_workspace and s.enabled and p_type = any (s.event_types))
  $$`;

const RECORD = (wanted: boolean) => `
  create or replace function webhook_record(p_workspace text, p_type text, p_subject_type text, p_subject_id text,
                                            p_version int, p_body jsonb)
  returns uuid language plpgsql as $$
  declare
    v_id uuid := gen_random_uuid();
    v_seq bigint;
  begin
    -- A change outside any workspace (no such booking) has no one to tell.
    if p_workspace is null then
      return null;
    end if;
    ${wanted ? 'if not webhook_wanted(p_workspace, p_type) then\n      return null;\n    end if;' : ''}
    insert into webhook_events (id, workspace_id, type, subject_type, subject_id, subject_version, body)
    values (v_id, p_workspace, p_type, p_subject_type, p_subject_id, p_version, p_body)
    returning seq into v_seq;
    with d as (
      insert into webhook_deliveries (id, subscription_id, event_id, event_seq, subject_id, next_attempt_at)
      select gen_random_uuid(), s.id, v_id, v_seq, p_subject_id, now()
        from webhook_subscriptions s
       where s.workspace_id = p_workspace and s.enabled and p_type = any (s.event_types)
      returning id)
    insert into outbox (queue, job_name, job_id, payload)
    select 'webhooks', 'deliver', 'webhook-' || d.id || '-0', jsonb_build_object('deliveryId', d.id) from d;
    return v_id;
  end $$`;

const TRIGGER = (wanted: boolean) => `
  create or replace function webhook_from_booking_event() returns trigger language plpgsql as $$
  declare
    v_workspace text;
    v_version int;
    v_campaign uuid;
  begin
    if new.action = 'booking.status-changed' then
      select advertiser_id, version, campaign_id into v_workspace, v_version, v_campaign from bookings where id = new.booking_id;
      ${wanted ? "if not webhook_wanted(v_workspace, 'booking.status_changed') then\n        return null;\n      end if;" : ''}
      perform webhook_record(v_workspace, 'booking.status_changed', 'booking', new.booking_id::text, v_version,
        jsonb_build_object('bookingId', new.booking_id, 'campaignId', v_campaign,
                           'from', new.detail->>'from', 'to', new.detail->>'to', 'actor', new.actor, 'source', new.source));
    elsif new.line_id is not null and (new.detail->>'from') is not null and (new.detail->>'to') is not null
          and (new.detail->>'from') is distinct from (new.detail->>'to') then
      select b.advertiser_id, l.version, b.campaign_id into v_workspace, v_version, v_campaign
        from booking_lines l join bookings b on b.id = l.booking_id where l.id = new.line_id;
      ${wanted ? "if not webhook_wanted(v_workspace, 'booking.line.status_changed') then\n        return null;\n      end if;" : ''}
      perform webhook_record(v_workspace, 'booking.line.status_changed', 'booking_line', new.line_id::text, v_version,
        jsonb_build_object('bookingId', new.booking_id, 'lineId', new.line_id, 'campaignId', v_campaign,
                           'from', new.detail->>'from', 'to', new.detail->>'to', 'action', new.action,
                           'actor', new.actor, 'source', new.source));
    end if;
    return null;
  end $$`;

export async function up(db: Knex): Promise<void> {
  await db.raw(WANTED);
  await db.raw(RECORD(true));
  await db.raw(TRIGGER(true));
}

export async function down(db: Knex): Promise<void> {
  await db.raw(RECORD(false));
  await db.raw(TRIGGER(false));
  await db.raw('drop function if exists webhook_wanted(text, text)');
}
