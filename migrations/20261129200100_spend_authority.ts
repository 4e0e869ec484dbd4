import type { Knex } from 'knex';

/**
 * Who may spend: a workspace may require a second person to approve any plan whose campaign may
 * commit more than an amount (`second_approval_above_minor`, null = one approver suffices), and a
 * plan keeps the approvals given to its current version (`approvals`, emptied when it changes).
 */
export async function up(db: Knex): Promise<void> {
  await db.schema.alterTable('workspaces', (t) => {
    t.bigInteger('second_approval_above_minor');
  });
  await db.raw(
    'alter table workspaces add constraint workspaces_second_approval_above check (second_approval_above_minor is null or second_approval_above_minor >= 0)',
  );
  await db.schema.alterTable('plans', (t) => {
    t.jsonb('approvals').notNullable().defaultTo(db.raw(`'[]'::jsonb`));
  });
}

export async function down(db: Knex): Promise<void> {
  await db.schema.alterTable('plans', (t) => t.dropColumn('approvals'));
  await db.schema.alterTable('workspaces', (t) => t.dropColumn('second_approval_above_minor'));
}
