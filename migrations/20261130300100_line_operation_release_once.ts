import type { Knex } from 'knex';

/**
 * A line operation gives money back at most once: a refused increase its held difference, an
 * applied decrease what the line may no longer spend (docs/billing.md, The ledger).
 */
export async function up(db: Knex): Promise<void> {
  await db.raw(`create unique index wallet_entries_line_operation_release_once on wallet_entries (subject_id)
    where kind = 'release' and subject_type = 'line_operation'`);
}

export async function down(db: Knex): Promise<void> {
  await db.raw('drop index if exists wallet_entries_line_operation_release_once');
}
