import type { Knex } from 'knex';

const ALL_CHANNELS = "'{ctv,audio,tv,cinema,dooh,search,social}'::text[]";

/**
 * Product scope for resources that have no channel of their own: personas (and the requests
 * that make them) and brand lift studies record the channels of the product that created them.
 * Rows from before this record nothing, so they take every channel: only the general product
 * sees them, never a narrower one (studies of a campaign take that campaign's channels).
 *
 * Ops: a server-owned role for queue inspection, apart from staff membership.
 */
export async function up(db: Knex): Promise<void> {
  for (const table of ['persona_requests', 'personas', 'brand_lift_studies']) {
    await db.raw(`alter table ${table} add column scope_channels text[] not null default ${ALL_CHANNELS}`);
  }
  await db.raw(
    'update brand_lift_studies s set scope_channels = c.channels from campaigns c where c.id = s.campaign_id and c.channels is not null',
  );

  await db.schema.createTable('ops_members', (t) => {
    t.string('user_id', 200).primary();
    t.boolean('active').notNullable().defaultTo(true);
    t.timestamp('granted_at', { useTz: true }).notNullable().defaultTo(db.fn.now());
    t.timestamp('revoked_at', { useTz: true });
  });
}

export async function down(db: Knex): Promise<void> {
  await db.schema.dropTableIfExists('ops_members');
  for (const table of ['brand_lift_studies', 'personas', 'persona_requests']) {
    await db.raw(`alter table ${table} drop column if exists scope_channels`);
  }
}
