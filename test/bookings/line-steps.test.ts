import { createTestEnv, type TestApi, type TestEnv } from '../support/api';
import { bookingFootprint, bookingStatusOf, launchPlan, sameCounts, sevenSandboxLines } from '../support/bookings';
import { SYSTEM } from '../../shared/auth/actor';
import type { LineStatus } from '../../shared/bookings/lines/state';
import { isStepAborted, stepLine } from '../../shared/bookings/lines/store';
import { attemptInsert, openAttemptQuery } from '../../shared/suppliers/attempts';
import { createDb, isStalePreparedStatement, prepared, rowsPrepared } from '../../shared/db/knex';
import { databaseProblem } from '../../shared/db/db-errors';

/**
 * The worker's usual steps run as one statement each, without taking the line's lock first:
 * the statement changes the line only if it is as expected, and then writes everything that
 * goes with it, or nothing at all.
 */
let env: TestEnv;
let api: TestApi;
beforeAll(async () => {
  env = await createTestEnv();
  api = await env.api();
});
afterAll(() => env.close());

const start = (bookingId: string, lineId: string, adapterKey: string) => {
  const { id, sql } = attemptInsert(
    { subjectKind: 'line', subjectId: lineId, lineId, bookingId, adapterKey, operation: 'book' },
    'updated',
  );
  return {
    attemptId: id,
    step: {
      bookingId,
      lineId,
      from: 'queued' as const,
      to: 'in-progress' as const,
      companionWrite: sql,
      companionMustWrite: true,
      patch: { provider_attempt_id: id },
      actor: SYSTEM,
      action: 'line.attempt-started',
      detail: { attemptId: id },
    },
  };
};

const closeAttempt = (attemptId: string) => ({
  sql: `update supplier_attempts set status = 'confirmed', finished_at = now() where id = ? and status = 'open' and exists (select 1 from updated) returning id`,
  bindings: [attemptId],
});

describe('a line step as one statement', () => {
  test('moves the line, opens its attempt, writes its event and the booking counts and status together', async () => {
    const { booking } = await launchPlan(env, api, sevenSandboxLines().slice(0, 2), 'org-steps-1');
    const [line] = booking.lines;
    const { attemptId, step } = start(booking.id, line!.id, line!.adapterKey);
    const stepped = await stepLine(env.db, step);
    expect(stepped?.line).toMatchObject({ status: 'in-progress', provider_attempt_id: attemptId, version: line!.version + 1 });

    const after = await bookingFootprint(env.db, booking.id);
    expect(after.booking.status).toBe('in-progress');
    expect(after.booking.line_counts).toMatchObject({ queued: 1, 'in-progress': 1 });
    expect(after.attempts).toEqual([{ id: attemptId, status: 'open' }]);
    const events = await env.db('booking_events').where({ booking_id: booking.id }).orderBy('seq').select('action', 'line_id', 'detail');
    expect(events.slice(-2)).toEqual([
      { action: 'line.attempt-started', line_id: line!.id, detail: { from: 'queued', to: 'in-progress', attemptId } },
      { action: 'booking.status-changed', line_id: null, detail: { from: 'queued', to: 'in-progress' } },
    ]);
  });

  test('writes nothing at all when the line is not where the step expects it', async () => {
    const { booking } = await launchPlan(env, api, sevenSandboxLines().slice(0, 2), 'org-steps-2');
    const [line] = booking.lines;
    const before = await bookingFootprint(env.db, booking.id);
    // Not in progress yet: an outcome step finds nothing to change.
    expect(
      await stepLine(env.db, {
        bookingId: booking.id,
        lineId: line!.id,
        from: 'in-progress',
        to: 'confirmed',
        where: { sql: 'provider_attempt_id = ?', bindings: ['att_none'] },
        actor: SYSTEM,
        action: 'line.confirmed',
      }),
    ).toBeNull();
    // A line that is not there, and this booking's line named under another booking.
    expect(await stepLine(env.db, start(booking.id, '00000000-0000-4000-8000-000000000000', 'sandbox-ctv').step)).toBeNull();
    expect(await stepLine(env.db, start('00000000-0000-4000-8000-000000000001', line!.id, line!.adapterKey).step)).toBeNull();
    expect(await bookingFootprint(env.db, booking.id)).toEqual(before);
  });

  test('a write that must go with the line and does not happen undoes the whole statement', async () => {
    const { booking } = await launchPlan(env, api, sevenSandboxLines().slice(0, 2), 'org-steps-3');
    const [line] = booking.lines;
    const { attemptId, step } = start(booking.id, line!.id, line!.adapterKey);
    await stepLine(env.db, step);
    // Someone closed the attempt without moving the line (no path does): the answer must not apply.
    await env.db('supplier_attempts').where({ id: attemptId }).update({ status: 'unknown' });
    const before = await bookingFootprint(env.db, booking.id);
    const outcome = stepLine(env.db, {
      bookingId: booking.id,
      lineId: line!.id,
      from: 'in-progress',
      to: 'confirmed',
      where: { sql: 'provider_attempt_id = ?', bindings: [attemptId] },
      companionWrite: closeAttempt(attemptId),
      companionMustWrite: true,
      patch: { provider_reference: 'ref-1' },
      actor: SYSTEM,
      action: 'line.confirmed',
    });
    expect(isStepAborted(await outcome.catch((err: unknown) => err))).toBe(true);
    expect(await bookingFootprint(env.db, booking.id)).toEqual(before);
  });

  test('every line of a booking stepping at once: counts, status and one unbroken chain of status events', async () => {
    const { booking } = await launchPlan(env, api, sevenSandboxLines(), 'org-steps-4');
    // Each line on a connection of its own, so the statements really meet at the booking's row.
    const pools = booking.lines.map(() => createDb(env.database.url, { max: 1 }));
    try {
      const outcomes: LineStatus[] = ['confirmed', 'rejected', 'confirmed', 'confirmed', 'rejected', 'confirmed', 'confirmed'];
      await Promise.all(
        booking.lines.map(async (line, i) => {
          const db = pools[i]!;
          const { attemptId, step } = start(booking.id, line.id, line.adapterKey);
          expect(await stepLine(db, step)).not.toBeNull();
          const done = await stepLine(db, {
            bookingId: booking.id,
            lineId: line.id,
            from: 'in-progress',
            to: outcomes[i]!,
            where: { sql: 'provider_attempt_id = ?', bindings: [attemptId] },
            companionWrite: closeAttempt(attemptId),
            companionMustWrite: true,
            actor: SYSTEM,
            action: `line.${outcomes[i]}`,
          });
          expect(done?.line.status).toBe(outcomes[i]);
        }),
      );
    } finally {
      await Promise.all(pools.map((p) => p.destroy()));
    }
    const stored = await env.db('bookings').where({ id: booking.id }).first('status', 'line_counts', 'version');
    const lines = (await env.db('booking_lines').where({ booking_id: booking.id }).pluck('status')) as LineStatus[];
    expect(stored.status).toBe(bookingStatusOf(lines));
    expect(stored.status).toBe('partially-confirmed');
    expect(sameCounts(stored.line_counts, lines)).toBe(true);
    // Fourteen line changes, each moving the booking's version once.
    expect(stored.version).toBe(booking.version + 14);
    const changes = (await env
      .db('booking_events')
      .where({ booking_id: booking.id, action: 'booking.status-changed' })
      .orderBy('seq')
      .pluck('detail')) as Array<{ from: string; to: string }>;
    expect(changes).toEqual([
      { from: 'queued', to: 'in-progress' },
      { from: 'in-progress', to: 'partially-confirmed' },
    ]);
    expect(await env.db('supplier_attempts').where({ booking_id: booking.id, status: 'open' })).toHaveLength(0);
  });
});

describe('hot statements prepared once per connection', () => {
  test('are named directly and in transactions, and never behind a transaction-mode pooler', async () => {
    const direct = createDb(env.database.url, { max: 1 });
    const pooled = createDb(env.database.url, { max: 1, pooler: 'transaction' });
    try {
      const sql = 'select 1 as one';
      const { name } = prepared(direct, sql);
      expect(name).toMatch(/^fd_[0-9a-f]{24}$/);
      expect(prepared(direct, `${sql} `).name).not.toBe(name);
      await direct.transaction(async (trx) => expect(prepared(trx, sql)).toEqual({ name }));
      expect(prepared(pooled, sql)).toEqual({});
      await pooled.transaction(async (trx) => expect(prepared(trx, sql)).toEqual({}));
      // A named statement runs again on its connection without being sent anew.
      for (let i = 0; i < 3; i++) expect((await direct.raw(sql).options({ name })).rows).toEqual([{ one: 1 }]);
    } finally {
      await direct.destroy();
      await pooled.destroy();
    }
  });
});

describe('prepared statements when a migration changes their columns under a running process', () => {
  test('a read is prepared again and answers with the new columns; in a transaction it fails once, as a transient 503, and then succeeds', async () => {
    const db = createDb(env.database.url, { max: 1 });
    try {
      await db.raw('create table migrated_under_us (id int primary key, a text)');
      await db('migrated_under_us').insert({ id: 1, a: 'x' });
      const read = () => rowsPrepared<Record<string, unknown>>(db, db('migrated_under_us').where({ id: 1 }).select('*'));
      expect(await read()).toEqual([{ id: 1, a: 'x' }]);

      // Another process's migration, on another connection: the one connection here still holds the old statement.
      await env.db.raw(`alter table migrated_under_us add column b text not null default 'new'`);
      expect(await read()).toEqual([{ id: 1, a: 'x', b: 'new' }]);
      expect(await read()).toEqual([{ id: 1, a: 'x', b: 'new' }]);

      await env.db.raw(`alter table migrated_under_us add column c int not null default 7`);
      const inTransaction = db.transaction((trx) => rowsPrepared(trx, trx('migrated_under_us').where({ id: 1 }).select('*')));
      const err = await inTransaction.then(
        () => null,
        (e: unknown) => e,
      );
      expect(isStalePreparedStatement(err)).toBe(true);
      expect(databaseProblem(err)).toMatchObject({ status: 503 });
      expect(await db.transaction((trx) => rowsPrepared(trx, trx('migrated_under_us').where({ id: 1 }).select('*')))).toEqual([
        { id: 1, a: 'x', b: 'new', c: 7 },
      ]);
    } finally {
      await db.destroy();
    }
  });
});

describe('plans that stay good as history grows', () => {
  test("a prepared statement's generic plan finds a subject's open attempt by a partial index, not by scanning every attempt", async () => {
    await env.db.raw(`insert into supplier_attempts (id, subject_kind, subject_id, adapter_key, operation, status)
      select 'att_history_' || g, 'line', md5(g::text), 'sandbox-ctv', 'book', 'confirmed' from generate_series(1, 20000) g`);
    await env.db.raw('analyze supplier_attempts');
    const { sql, bindings } = openAttemptQuery(env.db, 'line', 'some-line', 'book').select(env.db.raw('1')).toSQL().toNative();
    const plan = await env.db.transaction(async (trx) => {
      await trx.raw('set local plan_cache_mode = force_generic_plan');
      await trx.raw(`prepare open_attempt_lookup as ${sql}`);
      const params = bindings.map((b) => `'${String(b)}'`).join(', ');
      const { rows } = (await trx.raw(`explain execute open_attempt_lookup(${params})`)) as { rows: Array<{ 'QUERY PLAN': string }> };
      await trx.raw('deallocate open_attempt_lookup');
      return rows.map((r) => r['QUERY PLAN']).join('\n');
    });
    // Either partial index on open attempts will do: both hold the open attempts only.
    expect(plan).toMatch(/supplier_attempts_(one_open_per_subject|open_since)/);
    expect(plan).not.toContain('Seq Scan');
  });
});
