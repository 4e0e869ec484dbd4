import type { Knex } from 'knex';

/**
 * Browser jobs are run, not only recorded: each row is queued, then running, then completed with
 * its evidence or failed with a reason, once. A job is bound to what it was asked about: the
 * booking's approved snapshot digest, the line's terms as they stood (`line_terms_digest`), and for
 * `prepare` the managed attempt that was in flight. Intents recorded before jobs ran were never
 * run: they are closed as failed, so that nothing waits for them.
 */
export async function up(db: Knex): Promise<void> {
  await db.schema.alterTable('browser_jobs', (t) => {
    t.string('snapshot_digest', 64);
    t.string('line_terms_digest', 64);
    t.string('provider_attempt_id', 200);
    t.integer('version').notNullable().defaultTo(1);
    t.string('run_by', 300);
    t.timestamp('started_at', { useTz: true });
    t.timestamp('finished_at', { useTz: true });
    t.string('failure_code', 60);
    t.string('failure_reason', 2000);
    t.jsonb('evidence');
  });
  await db.raw(`update browser_jobs j set snapshot_digest = (select b.snapshot_digest from bookings b where b.id = j.booking_id),
                  status = 'failed', finished_at = j.created_at, failure_code = 'never_run',
                  failure_reason = 'Recorded before browser jobs were run; ask for it again to run it.'`);
  // An intent whose booking is gone has nothing left to show.
  await db('browser_jobs').whereNull('snapshot_digest').delete();
  await db.raw('alter table browser_jobs alter column snapshot_digest set not null');
  await db.raw(`alter table browser_jobs alter column status set default 'queued'`);
  await db.raw(`alter table browser_jobs add constraint browser_jobs_status
                  check (status in ('queued', 'running', 'completed', 'failed'))`);
  await db.raw(`alter table browser_jobs add constraint browser_jobs_failed_with_reason
                  check ((status = 'failed') = (failure_code is not null))`);
  await db.schema.alterTable('browser_jobs', (t) => {
    t.index(['booking_id', 'created_at']);
    t.index(['line_id', 'status']);
  });
  await db.raw(`create index browser_jobs_waiting on browser_jobs (created_at) where status in ('queued', 'running')`);
}

export async function down(db: Knex): Promise<void> {
  await db.raw('drop index if exists browser_jobs_waiting');
  await db.raw('alter table browser_jobs drop constraint if exists browser_jobs_failed_with_reason');
  await db.raw('alter table browser_jobs drop constraint if exists browser_jobs_status');
  await db.raw(`alter table browser_jobs alter column status set default 'recorded'`);
  await db.schema.alterTable('browser_jobs', (t) => {
    t.dropIndex(['booking_id', 'created_at']);
    t.dropIndex(['line_id', 'status']);
    for (const c of [
      'snapshot_digest',
      'line_terms_digest',
      'provider_attempt_id',
      'version',
      'run_by',
      'started_at',
      'finished_at',
      'failure_code',
      'failure_reason',
      'evidence',
    ])
      t.dropColumn(c);
  });
}
