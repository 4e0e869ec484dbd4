import type { Knex } from 'knex';

/**
 * The vanished-job sweep looks every few minutes for work still in its first state. These
 * partial indexes hold only that work, so the sweep stays cheap however large history grows.
 */
export async function up(db: Knex): Promise<void> {
  await db.raw("create index booking_lines_queued on booking_lines (id) where status = 'queued'");
  await db.raw("create index creative_reviews_queued on creative_reviews (id) where status = 'queued'");
  await db.raw("create index cohort_sync_attempts_queued on cohort_sync_attempts (id) where status = 'queued'");
}

export async function down(db: Knex): Promise<void> {
  await db.raw('drop index if exists cohort_sync_attempts_queued');
  await db.raw('drop index if exists creative_reviews_queued');
  await db.raw('drop index if exists booking_lines_queued');
}
