import type { Knex } from 'knex';

/**
 * One attempt ledger for every supplier call: booking lines, creative reviews and audience
 * syncs. Each attempt names its subject, so "one open attempt per subject", late answers and
 * the stuck-attempt sweep are written once. A late answer (the supplier spoke after someone
 * else had closed the attempt) is kept as evidence and never moves the subject.
 */
export async function up(db: Knex): Promise<void> {
  await db.schema.alterTable('supplier_attempts', (t) => {
    t.string('subject_kind', 16);
    t.string('subject_id', 100);
    t.jsonb('late_outcome');
    t.timestamp('late_outcome_at', { useTz: true });
  });
  await db.raw("update supplier_attempts set subject_kind = 'line', subject_id = line_id::text");
  await db.raw('alter table supplier_attempts alter column subject_kind set not null, alter column subject_id set not null');
  await db.raw('alter table supplier_attempts alter column line_id drop not null, alter column booking_id drop not null');
  await db.raw(
    "alter table supplier_attempts add constraint supplier_attempts_subject_kind check (subject_kind in ('line', 'review', 'sync'))",
  );
  await db.raw('drop index if exists supplier_attempts_one_open_per_line');
  await db.raw(
    "create unique index supplier_attempts_one_open_per_subject on supplier_attempts (subject_kind, subject_id) where status = 'open'",
  );
  // Booking views load every line's attempts by booking.
  await db.raw('create index supplier_attempts_booking on supplier_attempts (booking_id) where booking_id is not null');
  // The stuck-attempt sweep reads only open attempts, oldest first.
  await db.raw("create index supplier_attempts_open_since on supplier_attempts (created_at, id) where status = 'open'");

  // Reviews and syncs already in flight get their ledger row, so that their late answers and the sweep find them.
  await db.raw(`
    insert into supplier_attempts (id, subject_kind, subject_id, adapter_key, operation, status, created_at)
    select r.attempt_id, 'review', r.id::text, r.adapter_key, 'review', 'open', r.created_at
      from creative_reviews r where r.status = 'in-flight' and r.attempt_id is not null
    on conflict (id) do nothing`);
  await db.raw(`
    insert into supplier_attempts (id, subject_kind, subject_id, adapter_key, operation, status, created_at)
    select a.id::text, 'sync', a.id::text, c.definition->>'adapterKey', 'audience-sync', 'open', coalesce(a.started_at, a.created_at)
      from cohort_sync_attempts a join identity_cohorts c on c.id = a.cohort_id where a.status = 'in-flight'
    on conflict (id) do nothing`);
}

export async function down(db: Knex): Promise<void> {
  await db.raw("delete from supplier_attempts where subject_kind <> 'line'");
  await db.raw('drop index if exists supplier_attempts_open_since');
  await db.raw('drop index if exists supplier_attempts_booking');
  await db.raw('drop index if exists supplier_attempts_one_open_per_subject');
  await db.raw("create unique index supplier_attempts_one_open_per_line on supplier_attempts (line_id) where status = 'open'");
  await db.raw('alter table supplier_attempts drop constraint if exists supplier_attempts_subject_kind');
  await db.schema.alterTable('supplier_attempts', (t) => {
    t.dropColumn('late_outcome_at');
    t.dropColumn('late_outcome');
    t.dropColumn('subject_id');
    t.dropColumn('subject_kind');
  });
}
