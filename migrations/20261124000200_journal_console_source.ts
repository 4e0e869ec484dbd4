import type { Knex } from 'knex';

/**
 * The mission journal names the console as the door a person's approval came through, as it
 * names the REST API and /mcp: the console calls the REST operations in process, and an
 * approval made there was recorded as `api`, indistinguishable from a direct REST call.
 */
export async function up(db: Knex): Promise<void> {
  await db.raw('alter table mission_journal drop constraint mission_journal_source');
  await db.raw("alter table mission_journal add constraint mission_journal_source check (source in ('api', 'mcp', 'console'))");
}

export async function down(db: Knex): Promise<void> {
  await db.raw("update mission_journal set source = 'api' where source = 'console'");
  await db.raw('alter table mission_journal drop constraint mission_journal_source');
  await db.raw("alter table mission_journal add constraint mission_journal_source check (source in ('api', 'mcp'))");
}
