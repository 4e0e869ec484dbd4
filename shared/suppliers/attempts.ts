import { randomUUID } from 'node:crypto';
import type { Knex } from 'knex';
import { UnknownOutcome } from '../adapters/adapter';
import type { Logger } from '../logger';
import { withDeadline, type CallDeadline } from '../timeout';
import { databaseOutageOf } from '../db/db-errors';
import type { SqlPart } from '../db/knex';

/**
 * The supplier-call engine. Every call that changes something at a supplier (a booking, a
 * creative review, an audience sync) runs the same way:
 *   1. one transaction commits an open attempt before the supplier hears of it;
 *   2. the supplier is called with the attempt id as its idempotency key, within a timeout;
 *   3. one transaction takes the subject's locks, closes the attempt if it is still open and
 *      applies the outcome; if someone else closed it meanwhile, the answer is kept on the
 *      attempt as late evidence and changes nothing.
 * A delivery that finds its attempt still open never calls again (the supplier may have
 * acted): the subject goes to reconciliation. Step 3 rides out a database outage (it holds a
 * real answer worth keeping); an attempt it still leaves open goes to reconciliation through
 * the sweep (see stuck-attempts.ts).
 */

export type SubjectKind = 'line' | 'review' | 'sync';

/** The supplier may or may not have acted: a timeout, a lost answer, a failure after sending. */
export interface Unknown {
  kind: 'unknown';
  cause: string;
}

export interface AttemptRow {
  id: string;
  subject_kind: SubjectKind;
  subject_id: string;
  line_id: string | null;
  booking_id: string | null;
  adapter_key: string;
  operation: string;
  status: string;
  provider_reference: string | null;
  detail: unknown;
  late_outcome: unknown;
  created_at: Date;
  finished_at: Date | null;
  late_outcome_at: Date | null;
  /** The queue job that carries the call, where it is not the subject's usual one. */
  job_id: string | null;
}

export interface NewAttempt {
  /** Defaults to a fresh `att_…` id; an audience sync reuses its own attempt id. */
  id?: string;
  subjectKind: SubjectKind;
  subjectId: string;
  adapterKey: string;
  operation: string;
  lineId?: string;
  bookingId?: string;
  /** The queue job that carries the call (the stuck-attempt sweep asks whether it is alive). */
  jobId?: string;
}

/** A fresh attempt id (`att_…`). */
export const newAttemptId = () => `att_${randomUUID()}`;

/**
 * The attempt's INSERT, open, at most one per subject (a unique index says so): one row for
 * each row of `source`, a statement's CTE holding the change it goes with (the attempt is then
 * opened only with that change), or one row by default, to run alone.
 */
export function attemptInsert(a: NewAttempt, source = '(select 1) as one'): { id: string; sql: SqlPart } {
  const id = a.id ?? newAttemptId();
  const sql = {
    sql: `insert into supplier_attempts (id, subject_kind, subject_id, adapter_key, operation, line_id, booking_id, job_id, status)
          select ?, ?, ?, ?, ?, ?, ?, ?, 'open' from ${source} returning id`,
    bindings: [id, a.subjectKind, a.subjectId, a.adapterKey, a.operation, a.lineId ?? null, a.bookingId ?? null, a.jobId ?? null],
  };
  return { id, sql };
}

/** Commits the attempt as open. */
export async function openAttempt(trx: Knex, a: NewAttempt): Promise<string> {
  const { id, sql } = attemptInsert(a);
  await trx.raw(sql.sql, sql.bindings);
  return id;
}

/** The open attempts of a subject, as a query to run or to embed in another. */
export function openAttemptQuery(trx: Knex, kind: SubjectKind, subjectId: string, operation?: string) {
  // 'open' written out, not bound: a prepared statement's generic plan can then use the partial
  // index on open attempts instead of scanning every attempt ever made.
  const q = trx<AttemptRow>('supplier_attempts').where({ subject_kind: kind, subject_id: subjectId }).whereRaw(`status = 'open'`);
  if (operation) q.andWhere({ operation });
  return q;
}

export async function findOpenAttempt(
  trx: Knex,
  kind: SubjectKind,
  subjectId: string,
  operation?: string,
): Promise<AttemptRow | undefined> {
  return (await openAttemptQuery(trx, kind, subjectId, operation).first()) as AttemptRow | undefined;
}

export interface AttemptClose {
  status: string;
  providerReference?: string | null;
  detail?: unknown;
}

/** The columns a close writes. */
const closedColumns = (trx: Knex, close: AttemptClose) => ({
  status: close.status,
  provider_reference: close.providerReference ?? null,
  detail: close.detail === undefined ? null : JSON.stringify(close.detail),
  finished_at: trx.fn.now(),
});

/** The attempt's close, if it is still open, as an UPDATE to run alone or inside a larger statement. */
function closeUpdate(trx: Knex, id: string, close: AttemptClose) {
  return trx('supplier_attempts').where({ id, status: 'open' }).update(closedColumns(trx, close));
}

/** Closes the attempt if it is still open; false when someone else already closed it. */
export async function closeAttempt(trx: Knex, id: string, close: AttemptClose): Promise<boolean> {
  return (await closeUpdate(trx, id, close)) > 0;
}

/**
 * An open attempt's close that the outcome step writes together with its own change (one
 * statement fewer); the engine writes it alone if the step did not take it.
 */
export interface AttemptCloser {
  /** The close as SQL for the step's statement; from then on the step writes it. */
  embed(): Knex.Sql;
}

/**
 * Closes every open attempt of a subject (a person took it out of the worker's hands), as SQL
 * for the statement that moves the subject: the close and the move commit together, and the
 * booking's row is not held across another round trip.
 */
export function closeOpenAttemptsSql(trx: Knex, kind: SubjectKind, subjectId: string, close: AttemptClose): SqlPart {
  return openAttemptQuery(trx, kind, subjectId).update(closedColumns(trx, close)).returning('id').toSQL();
}

/** The supplier answered after the attempt was closed: keep the first such answer as evidence. */
export async function recordLateOutcome(trx: Knex, id: string, outcome: unknown): Promise<void> {
  await trx('supplier_attempts')
    .where({ id })
    .whereNull('late_outcome')
    .update({ late_outcome: JSON.stringify(outcome), late_outcome_at: trx.fn.now() });
}

/**
 * Calls the supplier within the timeout; anything but an answer is an unknown outcome. Past the
 * timeout the call is told to send nothing more (no resend), and what it still answers within
 * `lateAnswerMs` comes back as `late`, to be kept on the attempt; then its request is cut.
 */
export async function callSupplier<T>(
  call: (deadline: CallDeadline) => Promise<T>,
  opts: CallOptions,
): Promise<{ outcome: T | Unknown; late: Promise<T | Unknown | null> | null }> {
  // The call's own "unknown" (a lost answer, nothing sent before its time ran out) is an answer too:
  // on time it is the outcome, late it is evidence.
  const told = (deadline: CallDeadline) =>
    call(deadline).catch((err: unknown): Unknown => {
      if (err instanceof UnknownOutcome) return { kind: 'unknown', cause: err.message };
      throw err;
    });
  try {
    const result = await withDeadline(told, opts.timeoutMs, opts.lateAnswerMs ?? opts.timeoutMs);
    if (result.kind === 'answered') return { outcome: result.value, late: null };
    return { outcome: { kind: 'unknown', cause: `no answer within ${opts.timeoutMs} ms` }, late: result.late };
  } catch (err) {
    opts.logger.error({ err, ...opts.context }, 'supplier call failed; outcome unknown');
    return { outcome: { kind: 'unknown', cause: 'The supplier call failed after it was sent.' }, late: null };
  }
}

export const isUnknown = (o: { kind: string }): o is Unknown => o.kind === 'unknown';

/** What a started call carries into its outcome step. `attemptId` is null for work that calls no supplier. */
export interface Started {
  attemptId: string | null;
}

export type Begun<S extends Started, R> = { kind: 'done'; result: R } | { kind: 'call'; start: S };

/** What `lock` may hand on to `apply`: at least whether the attempt was still open when the locks were taken. */
export interface Held {
  attemptOpen: boolean;
}

/**
 * One kind of supplier call: what only it knows; the engine does the rest. `H` is what its `lock`
 * read with the subject's locks, handed to its `apply` in the same transaction.
 */
export interface SupplierCallFlow<S extends Started, O extends { kind: string }, R, H extends Held = Held> {
  /** Inside the first transaction: lock the subject, open the attempt, or decide there is nothing to do. */
  begin(trx: Knex.Transaction): Promise<Begun<S, R>>;
  /**
   * Optional: the usual start (the subject as the queue left it) as one statement that opens the
   * attempt with the subject's change; null when the subject is not so, and then nothing was
   * written and `begin` runs.
   */
  tryBegin?(db: Knex): Promise<Begun<S, R> | null>;
  /** The supplier call itself (outside any transaction), told when to stop by `deadline`. */
  call(start: S, deadline: CallDeadline): Promise<O>;
  /**
   * Takes the subject's locks, in the global order, before the attempt is closed. A flow whose
   * attempts are only ever closed under these same locks may read the attempt's status with
   * them and say whether it is still open: the engine then leaves the close to `apply`, with
   * what `lock` returned.
   */
  lock(trx: Knex.Transaction, start: S): Promise<H | void>;
  /** How the attempt closes for this outcome. */
  closeWith(outcome: O | Unknown): AttemptClose;
  /**
   * The attempt was still open and is now closed: move the subject. With `closer` (the flow's
   * `lock` said the attempt is open), the close is the flow's to write with its change. `held`:
   * what `lock` returned.
   */
  apply(trx: Knex.Transaction, start: S, outcome: O | Unknown, held: H | void, closer?: AttemptCloser): Promise<R>;
  /**
   * Optional: the usual outcome (the subject exactly as `begin` left it, the attempt still open)
   * as one statement that closes the attempt with the subject's change. `close(source)` is the
   * attempt's close, made only with the change held in the statement's CTE `source`. Null when
   * the subject or the attempt is not so, and then nothing was written and the locked step runs.
   */
  tryApply?(db: Knex, start: S, outcome: O | Unknown, close: (source: string) => SqlPart): Promise<R | null>;
  /** Someone else closed the attempt first: the answer is on it as late evidence; say so, move nothing. */
  late(trx: Knex.Transaction, start: S, outcome: O | Unknown): Promise<R>;
}

export interface CallOptions {
  timeoutMs: number;
  logger: Logger;
  /** Ids for the log line when the call fails. */
  context: Record<string, unknown>;
  /** How long an answer is still waited for, and kept, after the timeout; the timeout again by default. */
  lateAnswerMs?: number;
}

export async function runSupplierCall<S extends Started, O extends { kind: string }, R, H extends Held>(
  db: Knex,
  flow: SupplierCallFlow<S, O, R, H>,
  opts: CallOptions,
): Promise<R> {
  const begun = (await flow.tryBegin?.(db)) ?? (await db.transaction((trx) => flow.begin(trx)));
  if (begun.kind === 'done') return begun.result;
  const { start } = begun;
  const { outcome, late } = await callSupplier((deadline) => flow.call(start, deadline), opts);
  const { attemptId } = start;
  const closeWith = flow.closeWith(outcome);
  const closeFrom = (source: string) =>
    closeUpdate(db, attemptId!, closeWith).whereRaw(`exists (select 1 from ${source})`).returning('id').toSQL();
  const result = await throughOutages(
    async () =>
      (attemptId && flow.tryApply ? await flow.tryApply(db, start, outcome, closeFrom) : null) ??
      db.transaction(async (trx) => {
        const held = await flow.lock(trx, start);
        if (!start.attemptId) return flow.apply(trx, start, outcome, held);
        const close = closeUpdate(trx, start.attemptId, closeWith);
        const open = held ? held.attemptOpen : (await close) > 0;
        if (!open) {
          await recordLateOutcome(trx, start.attemptId, outcome);
          return flow.late(trx, start, outcome);
        }
        if (!held) return flow.apply(trx, start, outcome, held);
        let embedded = false;
        const result = await flow.apply(trx, start, outcome, held, {
          embed: () => ((embedded = true), close.toSQL()),
        });
        if (!embedded) await close;
        return result;
      }),
    opts,
  );
  // A timed-out call that answers after all: its answer is kept on the attempt, as late evidence
  // for whoever reconciles the subject (a seller's media buy id, say), and moves nothing.
  const answer = await late;

  if (answer && attemptId) {
    await throughOutages(
      () =>
        db.transaction(async (trx) => {
          await flow.lock(trx, start);
          await recordLateOutcome(trx, attemptId, answer);
          await flow.late(trx, start, answer);
        }),
      opts,
    ).catch((err: unknown) =>
      opts.logger.warn({ ...opts.context, err: { message: (err as Error).message } }, 'a late supplier answer could not be kept'),
    );
    opts.logger.warn(
      { ...opts.context, outcome: answer.kind },
      'the supplier answered after its time was up; the answer is kept as late evidence',
    );
  }
  return result;
}

/**
 * How long a supplier's answer waits for the database to come back before the attempt is left
 * to the sweep. The job keeps its queue lock meanwhile, so no other delivery takes it over.
 */
export const RECORD_OUTCOME_WITHIN_MS = 60_000;

/** Runs the outcome transaction again while the database is down, busy or timing out. */
async function throughOutages<R>(write: () => Promise<R>, opts: CallOptions): Promise<R> {
  const deadline = Date.now() + RECORD_OUTCOME_WITHIN_MS;
  for (let waitMs = 250; ; waitMs = Math.min(waitMs * 2, 4_000)) {
    try {
      return await write();
    } catch (err) {
      const outage = databaseOutageOf(err);
      if (!outage || Date.now() + waitMs > deadline) throw err;
      opts.logger.warn(
        { ...opts.context, outage, retryInMs: waitMs, err: { message: (err as Error).message } },
        'the database refused the supplier outcome; retrying',
      );
      await new Promise((r) => setTimeout(r, waitMs));
    }
  }
}

/** Closes an attempt whose call was interrupted (a re-delivery, the sweep): its outcome is unknown. */
export function interrupted(reason: string, cause: 'redelivered' | 'stuck'): AttemptClose {
  return { status: 'unknown', detail: { reason, cause } };
}

export function attemptView(a: AttemptRow) {
  return {
    id: a.id,
    operation: a.operation,
    status: a.status,
    providerReference: a.provider_reference,
    createdAt: a.created_at.toISOString(),
    finishedAt: a.finished_at ? a.finished_at.toISOString() : null,
    // The supplier's answer that arrived after the attempt had been closed by someone else.
    lateOutcome: a.late_outcome ?? null,
    lateOutcomeAt: a.late_outcome_at ? a.late_outcome_at.toISOString() : null,
    // Where the supplier's read-back after a change differed from what was asked (empty: it agreed).
    drift: driftOf(a.detail),
  };
}

function driftOf(detail: unknown): string[] | null {
  const drift = (detail as { detail?: { drift?: unknown } } | null)?.detail?.drift;
  return Array.isArray(drift) ? drift.map(String) : null;
}
