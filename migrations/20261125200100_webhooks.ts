import type { Knex } from 'knex';

/**
 * Outbound webhooks. An event is written in the transaction that made its change, by one
 * function, `webhook_record`: it stores the event, a delivery for every enabled subscription of
 * the workspace that wants its type, and one outbox row per delivery (queue `webhooks`), so an
 * event and its deliveries exist exactly when the change does. Booking events (every line status
 * move and booking status change, written by many single-statement paths) reach it through a
 * trigger on `booking_events`; other changes call it from `recordEvent` (shared/events/).
 */
export async function up(db: Knex): Promise<void> {
  await db.schema.createTable('webhook_subscriptions', (t) => {
    t.uuid('id').primary();
    t.string('workspace_id', 200).notNullable().references('workspaces.id').onDelete('CASCADE');
    t.string('url', 2048).notNullable();
    t.specificType('event_types', 'text[]').notNullable();
    t.string('description', 500);
    t.boolean('enabled').notNullable().defaultTo(true);
    t.text('secret').notNullable();
    t.text('previous_secret');
    t.timestamp('previous_secret_expires_at', { useTz: true });
    t.timestamp('failing_since', { useTz: true });
    t.integer('version').notNullable().defaultTo(1);
    t.string('created_by', 400).notNullable();
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(db.fn.now());
    t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(db.fn.now());
    t.index(['workspace_id', 'created_at']);
  });
  await db.raw('create index webhook_subscriptions_failing on webhook_subscriptions (failing_since) where failing_since is not null');

  await db.schema.createTable('webhook_events', (t) => {
    t.bigIncrements('seq');
    t.uuid('id').notNullable().unique();
    t.string('workspace_id', 200).notNullable().references('workspaces.id').onDelete('CASCADE');
    t.string('type', 100).notNullable();
    t.string('subject_type', 60).notNullable();
    t.string('subject_id', 200).notNullable();
    t.integer('subject_version').notNullable();
    t.jsonb('body').notNullable();
    t.timestamp('occurred_at', { useTz: true }).notNullable().defaultTo(db.fn.now());
    t.index(['workspace_id', 'seq']);
  });

  await db.schema.createTable('webhook_deliveries', (t) => {
    t.uuid('id').primary();
    t.uuid('subscription_id').notNullable().references('webhook_subscriptions.id').onDelete('CASCADE');
    t.uuid('event_id').notNullable().references('webhook_events.id').onDelete('CASCADE');
    t.bigInteger('event_seq').notNullable();
    t.string('subject_id', 200).notNullable();
    t.string('status', 16).notNullable().defaultTo('pending'); // pending | delivered | failed
    t.integer('attempts').notNullable().defaultTo(0);
    t.timestamp('next_attempt_at', { useTz: true });
    t.timestamp('leased_until', { useTz: true });
    t.integer('last_status_code');
    t.string('last_error', 300);
    t.timestamp('delivered_at', { useTz: true });
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(db.fn.now());
    t.unique(['subscription_id', 'event_id']);
    t.index(['subscription_id', 'created_at']);
  });
  // The order rule's lookup: the pending deliveries of a subscription and subject, oldest event first.
  await db.raw(
    `create index webhook_deliveries_chain on webhook_deliveries (subscription_id, subject_id, event_seq) where status = 'pending'`,
  );
  await db.raw(`create index webhook_deliveries_due on webhook_deliveries (next_attempt_at) where status = 'pending'`);
  // A subscription's waiting deliveries, oldest event first: what fills its free slots after a send.
  await db.raw(`create index webhook_deliveries_queue on webhook_deliveries (subscription_id, event_seq) where status = 'pending'`);

  await db.schema.createTable('webhook_attempts', (t) => {
    t.bigIncrements('id');
    t.uuid('delivery_id').notNullable().references('webhook_deliveries.id').onDelete('CASCADE');
    t.integer('attempt').notNullable();
    t.timestamp('started_at', { useTz: true }).notNullable();
    t.integer('status_code');
    t.integer('latency_ms').notNullable();
    t.string('error', 300);
    t.index(['delivery_id', 'attempt']);
  });

  await db.raw(`
    create function webhook_record(p_workspace text, p_type text, p_subject_type text, p_subject_id text, p_version int, p_body jsonb)
    returns uuid language plpgsql as $$
    declare
      v_id uuid := gen_random_uuid();
      v_seq bigint;
    begin
      -- A change outside any workspace (no such booking) has no one to tell.
      if p_workspace is null then
        return null;
      end if;
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
    end $$`);

  // Booking events: a line's status move and a booking's status change become webhook events.
  await db.raw(`
    create function webhook_from_booking_event() returns trigger language plpgsql as $$
    declare
      v_workspace text;
      v_version int;
      v_campaign uuid;
    begin
      if new.action = 'booking.status-changed' then
        select advertiser_id, version, campaign_id into v_workspace, v_version, v_campaign from bookings where id = new.booking_id;
        perform webhook_record(v_workspace, 'booking.status_changed', 'booking', new.booking_id::text, v_version,
          jsonb_build_object('bookingId', new.booking_id, 'campaignId', v_campaign,
                             'from', new.detail->>'from', 'to', new.detail->>'to', 'actor', new.actor, 'source', new.source));
      elsif new.line_id is not null and (new.detail->>'from') is not null and (new.detail->>'to') is not null
            and (new.detail->>'from') is distinct from (new.detail->>'to') then
        select b.advertiser_id, l.version, b.campaign_id into v_workspace, v_version, v_campaign
          from booking_lines l join bookings b on b.id = l.booking_id where l.id = new.line_id;
        perform webhook_record(v_workspace, 'booking.line.status_changed', 'booking_line', new.line_id::text, v_version,
          jsonb_build_object('bookingId', new.booking_id, 'lineId', new.line_id, 'campaignId', v_campaign,
                             'from', new.detail->>'from', 'to', new.detail->>'to', 'action', new.action,
                             'actor', new.actor, 'source', new.source));
      end if;
      return null;
    end $$`);
  await db.raw(
    `create trigger booking_events_webhooks after insert on booking_events for each row execute function webhook_from_booking_event()`,
  );
}

export async function down(db: Knex): Promise<void> {
  await db.raw('drop trigger if exists booking_events_webhooks on booking_events');
  await db.raw('drop function if exists webhook_from_booking_event()');
  await db.raw('drop function if exists webhook_record(text, text, text, text, int, jsonb)');
  for (const t of ['webhook_attempts', 'webhook_deliveries', 'webhook_events', 'webhook_subscriptions'])
    await db.schema.dropTableIfExists(t);
}
