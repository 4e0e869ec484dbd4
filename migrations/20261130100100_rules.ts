import type { Knex } from 'knex';

/**
 * Guarded automatic rules (docs/agent.md, Rules): a workspace's rules over one campaign, each
 * firing once per subject (a line, or the campaign) per evaluation day, and each dry run kept.
 */
export async function up(db: Knex): Promise<void> {
  await db.schema.createTable('rules', (t) => {
    t.uuid('id').primary();
    t.text('advertiser_id').notNullable();
    t.uuid('campaign_id').notNullable().references('id').inTable('campaigns');
    t.text('name').notNullable();
    t.jsonb('condition').notNullable();
    t.jsonb('action').notNullable();
    t.jsonb('guardrails').notNullable();
    t.text('mode').notNullable().defaultTo('notify-only');
    t.integer('version').notNullable().defaultTo(1);
    t.text('created_by').notNullable();
    t.text('enabled_by');
    t.timestamp('enabled_at', { useTz: true });
    t.timestamp('deleted_at', { useTz: true });
    t.timestamps(true, true);
    t.index(['advertiser_id', 'created_at']);
  });
  await db.raw("alter table rules add constraint rules_mode check (mode in ('notify-only', 'active'))");
  await db.raw("alter table rules add constraint rules_enabled_by check (mode = 'notify-only' or enabled_by is not null)");

  await db.schema.createTable('rule_firings', (t) => {
    t.uuid('id').primary();
    t.uuid('rule_id').notNullable().references('id').inTable('rules');
    t.text('advertiser_id').notNullable();
    t.uuid('campaign_id').notNullable();
    t.integer('rule_version').notNullable();
    t.date('evaluation_day').notNullable();
    /** The line the condition held for, or the campaign id for a campaign rule. */
    t.uuid('subject_id').notNullable();
    t.text('mode').notNullable();
    t.text('outcome').notNullable();
    t.jsonb('planned').notNullable();
    /** Budget moved (or held for a move in hand): what the per-day and per-flight guardrails count. */
    t.bigInteger('moved_minor').notNullable().defaultTo(0);
    t.uuid('approval_id');
    t.uuid('step_id');
    t.text('detail');
    t.timestamps(true, true);
    // One firing per rule, subject and evaluation day, however many cycles run at once.
    t.unique(['rule_id', 'evaluation_day', 'subject_id']);
    t.index(['advertiser_id', 'created_at']);
  });
  await db.raw(
    "alter table rule_firings add constraint rule_firings_outcome check (outcome in ('notified', 'executing', 'executed', 'awaiting-approval', 'held', 'failed'))",
  );

  await db.schema.createTable('rule_dry_runs', (t) => {
    t.uuid('id').primary();
    t.uuid('rule_id').notNullable().references('id').inTable('rules');
    t.text('advertiser_id').notNullable();
    t.integer('rule_version').notNullable();
    t.date('from_day').notNullable();
    t.date('through_day').notNullable();
    t.jsonb('firings').notNullable();
    t.bigInteger('moved_minor').notNullable();
    t.text('requested_by').notNullable();
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(db.fn.now());
    t.index(['rule_id', 'created_at']);
  });
  // A rule's governed actions are journalled as coming through the rules, not a person's door.
  await db.raw('alter table mission_journal drop constraint mission_journal_source');
  await db.raw("alter table mission_journal add constraint mission_journal_source check (source in ('api', 'mcp', 'console', 'rules'))");
}

export async function down(db: Knex): Promise<void> {
  await db.raw('alter table mission_journal drop constraint mission_journal_source');
  await db.raw("alter table mission_journal add constraint mission_journal_source check (source in ('api', 'mcp', 'console'))");
  await db.schema.dropTable('rule_dry_runs');
  await db.schema.dropTable('rule_firings');
  await db.schema.dropTable('rules');
}
