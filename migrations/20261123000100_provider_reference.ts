import type { Knex } from 'knex';

/**
 * The supplier's id for a line, review or sync attempt has one name everywhere, the
 * specification's: provider_reference (it was external_reference and supplier_reference too).
 */
const RENAMES: Array<[table: string, from: string]> = [
  ['creative_reviews', 'external_reference'],
  ['creative_approvals', 'external_reference'],
  ['cohort_sync_attempts', 'supplier_reference'],
];

export async function up(db: Knex): Promise<void> {
  for (const [table, from] of RENAMES) await db.schema.alterTable(table, (t) => t.renameColumn(from, 'provider_reference'));
}

export async function down(db: Knex): Promise<void> {
  for (const [table, from] of RENAMES) await db.schema.alterTable(table, (t) => t.renameColumn('provider_reference', from));
}
