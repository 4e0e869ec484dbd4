import type { Knex } from 'knex';

/**
 * The hosted agent endpoint (/mcp): the mission journal says who acted and through which
 * door (a person or an agent; the REST API or /mcp), and the embedded development
 * authorization server keeps its codes, grants, sessions and interactions here so that a
 * code is refused when reused from any process.
 */
export async function up(db: Knex): Promise<void> {
  await db.schema.alterTable('mission_journal', (t) => {
    t.string('actor', 10);
    t.string('source', 10);
  });
  await db.raw("update mission_journal set actor = case when actor_id like '%|agent:%' then 'agent' else 'human' end, source = 'api'");
  await db.raw('alter table mission_journal alter column actor set not null, alter column source set not null');
  await db.raw("alter table mission_journal add constraint mission_journal_actor check (actor in ('human', 'agent'))");
  await db.raw("alter table mission_journal add constraint mission_journal_source check (source in ('api', 'mcp'))");

  await db.schema.createTable('oauth_artifacts', (t) => {
    t.string('model', 40).notNullable();
    t.string('id', 200).notNullable();
    t.jsonb('payload').notNullable();
    t.string('grant_id', 200);
    t.string('uid', 200);
    t.timestamp('expires_at', { useTz: true });
    t.timestamp('consumed_at', { useTz: true });
    t.primary(['model', 'id']);
    t.index(['grant_id']);
    t.index(['model', 'uid']);
    t.index(['expires_at']);
  });
}

export async function down(db: Knex): Promise<void> {
  await db.schema.dropTableIfExists('oauth_artifacts');
  await db.schema.alterTable('mission_journal', (t) => {
    t.dropColumn('source');
    t.dropColumn('actor');
  });
}
