import { randomUUID } from 'node:crypto';
import type { Knex } from 'knex';
import { conflict, notFound } from '../../errors';
import type { Actor } from '../../auth/actor';
import { rawPrepared, type SqlPart } from '../../db/knex';
import type { BookingStatus } from '../booking-status';
import type { LineRow } from '../booking-store';
import { assertMove, type LineStatus } from './state';
import { settleBooking, settleLine } from '../booking-money';

export interface LineChange {
  bookingId: string;
  lineId: string;
  /** When given, the line must be at exactly this version (409 otherwise). */
  expectedVersion?: number;
  /** The new status; omitted for changes that keep it (a claim). */
  to?: LineStatus;
  /** Other columns to set, snake_case. */
  patch?: Record<string, unknown>;
  actor: Actor;
  action: string;
  detail?: unknown;
  /** Another write made in the same statement as the line's (e.g. opening the attempt it starts). */
  companionWrite?: SqlPart;
  /** More writes made with the line's, in the same statement (e.g. the line operation's record). */
  writes?: SqlPart[];
  /** Extra checks on the locked line before it changes (e.g. "only workflow lines"). */
  guard?: (line: LineRow) => void;
}

/**
 * Locks a line and its booking's row, the first locks of every locked path that changes lines,
 * held to the commit. The booking is locked here rather than first by the change's own write:
 * that way, twelve resolves of one booking racing late supplier answers deadlocked, PostgreSQL
 * finding two of them each holding a lock on the booking's row and queued behind the other for
 * a stronger one (booking events take KEY SHARE locks on it through their foreign key). Paths
 * that change several lines lock them all first, in (booking, id) order, then the bookings in id
 * order. `readWith` is one more value the caller wants read with it (an SQL expression over `b`,
 * the booking, and `l`, the line), returned as `read`.
 */
export async function lockLine(
  trx: Knex,
  bookingId: string,
  lineId: string,
  readWith?: { sql: string; bindings: readonly Knex.Value[] },
): Promise<{ line: LineRow; read: unknown } | null> {
  const { rows } = await trx.raw<{ rows: Array<LineRow & { read_with?: unknown }> }>(
    `select l.*${readWith ? `, (${readWith.sql}) as read_with` : ''}
       from booking_lines l join bookings b on b.id = l.booking_id
      where l.booking_id = ? and l.id = ?
        for update of l for no key update of b`,
    [...(readWith?.bindings ?? []), bookingId, lineId],
  );
  const row = rows[0];
  if (!row) return null;
  const { read_with: extra, ...line } = row;
  return { line, read: extra };
}

export type LockedLine = NonNullable<Awaited<ReturnType<typeof lockLine>>>;

/**
 * What every line step writes after its lines, for one line or many in one statement: each
 * line's event, each booking's version, line counts and status (`booking_status_of`), and a
 * status-change event where that status moved. It reads the CTE `stepped`: the changed lines'
 * columns with `step_from` (the status each left), `event_action` and `event_detail`. The
 * bookings are locked after every line, in id order (the global lock order), and a booking
 * whose lock was waited for is read as its holder committed it (PostgreSQL re-reads a row it
 * locks after waiting), so its counts take in every committed line change. Bindings:
 * `stepTailValues`. A statement using it selects from `bumped` (id, status, was, counted:
 * false when the counts cannot be right).
 */
export const STEP_TAIL = `
  moves as (select s.booking_id, m.status, sum(m.d)::int as d
              from stepped s cross join lateral (values (s.step_from::text, -1), (s.status::text, 1)) as m(status, d)
             group by s.booking_id, m.status having sum(m.d) <> 0),
  locked as (select id, status, line_counts from bookings where id in (select booking_id from stepped) order by id for no key update),
  counted as (select b.id, b.status as was,
                     b.line_counts || coalesce((select jsonb_object_agg(m.status, coalesce((b.line_counts->>m.status)::int, 0) + m.d)
                                                  from moves m where m.booking_id = b.id), '{}'::jsonb) as counts
                from locked b),
  next as (select *, booking_status_of(counts) as status from counted),
  bumped as (update bookings b set version = b.version + 1, line_counts = next.counts, status = coalesce(next.status, b.status)
               from next where b.id = next.id
             returning b.id, b.status, next.was, next.status is not null as counted),
  -- The lines' events, then the status changes they made, in that order.
  events as (insert into booking_events (id, booking_id, line_id, action, actor_id, actor, source, detail)
             select gen_random_uuid(), s.booking_id, s.id, s.event_action, ?, ?, ?, s.event_detail from stepped s
             union all
             select gen_random_uuid(), bumped.id, null, 'booking.status-changed', ?, ?, ?, jsonb_build_object('from', was, 'to', status)
               from bumped where status <> was)`;

export const stepTailValues = (actor: Actor): Knex.Value[] => {
  const who = [actor.actorId, actor.actor, actor.source];
  return [...who, ...who];
};

/**
 * The booking's status-change event, as an INSERT … SELECT over a source with `was` and
 * `status` columns (the caller adds `from` and the condition), with `statusEventValues`.
 */
const STATUS_EVENT = `insert into booking_events (id, booking_id, line_id, action, actor_id, actor, source, detail)
  select ?, ?, null, 'booking.status-changed', ?, ?, ?, jsonb_build_object('from', was, 'to', status)`;
const statusEventValues = (bookingId: string, actor: Actor): Knex.Value[] => [
  randomUUID(),
  bookingId,
  actor.actorId,
  actor.actor,
  actor.source,
];

/** A line step: the status (and version) the line must be at, and what it becomes. */
export interface LineStep {
  bookingId: string;
  lineId: string;
  from: LineStatus;
  to: LineStatus;
  /** The version the line must be at, when known. */
  version?: number;
  /** More conditions on the line (SQL over `booking_lines`), e.g. the attempt it waits on. */
  where?: SqlPart;
  patch?: Record<string, unknown>;
  actor: Actor;
  action: string;
  detail?: unknown;
  /**
   * Another write in the same statement, made only with the line's (it reads the changed line
   * from `updated`). With `companionMustWrite` (the write then says `returning`), a line change
   * whose companionWrite wrote nothing aborts the whole statement (error code FD001): e.g. closing an
   * attempt that is no longer open.
   */
  companionWrite?: SqlPart;
  companionMustWrite?: boolean;
  /**
   * More writes in the same statement (each a CTE, like `companionWrite`). A statement run alone
   * commits whatever it wrote even when the line was not as expected: there, each write must read
   * `updated` (e.g. `where exists (select 1 from updated)`) so that it happens only with the line's.
   */
  writes?: SqlPart[];
  /** One more value to read with the changed line (SQL over `updated`), returned as `read`. */
  readWith?: SqlPart;
}

export type StepRow = LineRow & { booking_status: BookingStatus; booking_was: BookingStatus; counted: boolean; read_with?: unknown };

/** The error a statement raises when its `companionMustWrite` write did not happen. */
export const isStepAborted = (err: unknown) => (err as { code?: unknown })?.code === 'FD001';

/**
 * One statement for the whole change: the line (only if it is at `from`, and `version` and
 * `where` when given), its event, the booking's version, line counts and status
 * (`booking_status_of`), and an event when that status changed; nothing at all if the line is
 * not as expected. The booking row is locked after the line (the global order) and only
 * until this statement's transaction ends: run alone, that is the statement itself.
 */
async function runStep(q: Knex, s: LineStep): Promise<StepRow | null> {
  const lineUpdate = q('booking_lines')
    .where({ id: s.lineId, booking_id: s.bookingId, status: s.from })
    .modify((b) => {
      if (s.version !== undefined) b.andWhere({ version: s.version });
      if (s.where) b.andWhereRaw(s.where.sql, [...s.where.bindings]);
    })
    .update({ ...(s.patch ?? {}), status: s.to, version: q.raw('version + 1'), updated_at: q.fn.now() })
    .returning('*')
    .toSQL();
  const detail = { from: s.from, to: s.to, ...(s.detail && typeof s.detail === 'object' ? s.detail : {}) };
  const mustWriteOnce = s.companionWrite && s.companionMustWrite;
  const sql = `with updated as (${lineUpdate.sql}),
     ${s.companionWrite ? `companion as (${s.companionWrite.sql}),` : ''}
     ${(s.writes ?? []).map((w, i) => `write_${i} as (${w.sql}),`).join('\n')}
     stepped as (select u.*, ?::text as step_from, ?::text as event_action, ?::jsonb as event_detail from updated u),
     ${STEP_TAIL}
     select updated.*, bumped.status as booking_status, bumped.was as booking_was, bumped.counted
            ${s.readWith ? `, (${s.readWith.sql}) as read_with` : ''}
            ${mustWriteOnce ? `, assert_line_step((select count(*) from companion) = 1, 'the write made with the line did not happen') as checked` : ''}
       from updated join bumped on bumped.id = updated.booking_id`;
  const rows = await rawPrepared<StepRow>(q, sql, [
    ...lineUpdate.bindings,
    ...(s.companionWrite?.bindings ?? []),
    ...(s.writes ?? []).flatMap((w) => w.bindings),
    s.from,
    s.action,
    JSON.stringify(detail),
    ...stepTailValues(s.actor),
    ...(s.readWith?.bindings ?? []),
  ]);
  return rows[0] ?? null;
}

/** Counts a booking's lines again, for counts that cannot be right; sets the status they give. */
export async function recountStatus(trx: Knex, bookingId: string, actor: Actor): Promise<{ was: BookingStatus; status: BookingStatus }> {
  const { rows } = await trx.raw<{ rows: Array<{ was: BookingStatus; status: BookingStatus }> }>(
    `with locked as (select id, status from bookings where id = ? for no key update),
     counted as (select coalesce(jsonb_object_agg(status, n), '{}'::jsonb) as counts
                   from (select status, count(*)::int as n from booking_lines where booking_id = ? group by status) s),
     updated as (update bookings b set line_counts = counted.counts, status = coalesce(booking_status_of(counted.counts), b.status)
                   from locked, counted where b.id = locked.id
                 returning b.status, locked.status as was),
     event as (${STATUS_EVENT} from updated where status <> was)
     select was, status from updated`,
    [bookingId, bookingId, ...statusEventValues(bookingId, actor)],
  );
  return rows[0]!;
}

/** What follows a line's change in the same transaction: money for live lines, and a recount if the counts were wrong. */
export async function afterStep(q: Knex, s: Pick<LineStep, 'bookingId' | 'from' | 'to' | 'actor'>, row: StepRow): Promise<LineRow> {
  const { booking_status: status0, booking_was: was0, counted, read_with: _read, ...line } = row;
  let status = status0;
  let was = was0;
  if (!counted) ({ status, was } = await recountStatus(q, s.bookingId, s.actor));
  if (s.from !== s.to) await settleLine(q, line as LineRow, s.to, s.actor.actorId);
  if (status !== was) await settleBooking(q, { id: s.bookingId, executionMode: line.execution_mode }, status, s.actor.actorId);
  return line as LineRow;
}

/**
 * A line step without taking the line's lock first: the statement changes the line only if it
 * is at `s.from` (and the rest of `s`'s conditions), which its own row lock decides. Null when
 * it is not, and then nothing was written. On the database itself (not a transaction) the
 * statement is its own transaction, so there it moves only lines whose step moves no money: a
 * start, or a sandbox line's step; a live line's outcome is null there and must run in a
 * transaction, with the money it moves.
 */
export async function stepLine(q: Knex, s: LineStep): Promise<{ line: LineRow; read: unknown } | null> {
  assertMove(s.from, s.to);
  const alone = !(q as Knex.Transaction).isTransaction;
  const step: LineStep =
    alone && s.to !== 'in-progress'
      ? { ...s, where: { sql: `execution_mode = 'sandbox'${s.where ? ` and (${s.where.sql})` : ''}`, bindings: s.where?.bindings ?? [] } }
      : s;
  const row = await runStep(q, step);
  if (!row) return null;
  return { line: await afterStep(q, step, row), read: row.read_with };
}

/**
 * The one way a line changes under its lock: check the expected version and the transition on
 * the locked line, then one statement (see `runStep`) writes the line, its event and its
 * booking's counts and status. A change that waited for the booking's lock sees the counts as
 * the change before it committed them (PostgreSQL applies a waiting UPDATE to the row as it then
 * is), so the status counts every committed line change.
 *
 * `held`: the line lock the caller already took in this transaction, with the line as read then
 * and not changed since; saves taking it again.
 */
export async function changeLine(trx: Knex, c: LineChange, held?: LockedLine): Promise<LineRow> {
  const locked = held ?? (await lockLine(trx, c.bookingId, c.lineId));
  if (!locked) throw notFound();
  const { line } = locked;
  if (c.expectedVersion !== undefined && c.expectedVersion !== line.version) {
    throw conflict(`The line is at version ${line.version}, not ${c.expectedVersion}. Read it again before acting.`, 'version_conflict');
  }
  c.guard?.(line);
  // A change to the status a line already has is not a transition either (a second start, a second uncertain).
  if (c.to) assertMove(line.status, c.to);
  const step: LineStep = { ...c, from: line.status, to: c.to ?? line.status, version: line.version };
  const row = await runStep(trx, step);
  if (!row) throw conflict('The line changed while this request ran. Read it again before acting.', 'version_conflict');
  return afterStep(trx, step, row);
}
