import type { Knex } from 'knex';

/**
 * Daily spend caps (docs/delivery.md, Daily caps): a campaign's and a booked line's most spend on
 * one UTC day, and the day the cap paused a line (the cap resumes only the lines it paused, at the
 * next day's start).
 */
export async function up(db: Knex): Promise<void> {
  await db.schema.alterTable('campaigns', (t) => {
    t.bigInteger('daily_cap_minor');
  });
  await db.schema.alterTable('booking_lines', (t) => {
    t.bigInteger('daily_cap_minor');
    t.date('cap_paused_on');
  });
  await db.raw('alter table campaigns add constraint campaigns_daily_cap_positive check (daily_cap_minor is null or daily_cap_minor > 0)');
  await db.raw(
    'alter table booking_lines add constraint booking_lines_daily_cap_positive check (daily_cap_minor is null or daily_cap_minor > 0)',
  );
}

export async function down(db: Knex): Promise<void> {
  await db.schema.alterTable('booking_lines', (t) => {
    t.dropColumn('daily_cap_minor');
    t.dropColumn('cap_paused_on');
  });
  await db.schema.alterTable('campaigns', (t) => {
    t.dropColumn('daily_cap_minor');
  });
}
