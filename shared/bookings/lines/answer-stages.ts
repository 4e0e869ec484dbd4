import type { Knex } from 'knex';
import { SYSTEM } from '../../auth/actor';
import {
  attemptInsert,
  closeAttempt,
  interrupted,
  isUnknown,
  runSupplierCall,
  type AttemptClose,
  type AttemptCloser,
  type SupplierCallFlow,
  type Unknown,
} from '../../suppliers/attempts';
import { appendEvent } from '../booking-events';
import type { ExecutionOptions, ExecutionResult } from './execution';
import { lineInterrupted } from '../line-operation-outcomes';
import { PENDING_OPERATION_SQL, type HeldOperation } from '../line-operation-store';
import { changeLine, lockLine, type LineChange, type LockedLine } from '../line-transitions';
import type { LineOperation } from '../line-state';

/**
 * The stages every supplier operation on a line shares, its booking's and the later ones' alike
 * (line-execution.ts, line-operation-execution.ts): a redelivery, the lock an answer is recorded
 * under, an unknown answer, a late one, and how an answer closes its attempt.
 */

export interface LineJob {
  bookingId: string;
  lineId: string;
}

const REDELIVERED = 'The operation was interrupted after it was sent; its outcome is unknown.';

/**
 * The locked start: the line's attempt is opened by the statement that moves the line to where
 * its call is in flight (`change`, given the attempt's id), so neither is ever written alone.
 */
export async function startUnderLock(
  trx: Knex,
  job: LineJob,
  locked: LockedLine,
  attempt: { operation: LineOperation; jobId: string },
  change: (attemptId: string) => Omit<LineChange, 'bookingId' | 'lineId' | 'actor' | 'companionWrite'>,
): Promise<string> {
  const { bookingId, lineId } = job;
  const { id, sql } = attemptInsert(
    { subjectKind: 'line', subjectId: lineId, lineId, bookingId, adapterKey: locked.line.adapter_key, ...attempt },
    'updated',
  );
  await changeLine(trx, { bookingId, lineId, actor: SYSTEM, companionWrite: sql, ...change(id) }, locked);
  return id;
}

/**
 * A job that finds its line's attempt still open ran before and stopped without recording an
 * outcome: the supplier may have acted. It never calls again; the attempt closes as interrupted and
 * the line goes to a person (reconciliation-required), if it still waits on that attempt.
 */
export async function redelivered(trx: Knex, job: LineJob, locked: LockedLine, openId: string, op?: HeldOperation) {
  await closeAttempt(trx, openId, interrupted(REDELIVERED, 'redelivered'));
  const moved = await lineInterrupted(trx, job.bookingId, job.lineId, openId, REDELIVERED, locked, undefined, op);
  return { kind: 'done' as const, result: (moved ? 'reconciliation-required' : 'skipped') as ExecutionResult };
}

/**
 * The line's locks (line, then booking) for recording an answer, with whether the attempt is still
 * open: every path that closes a line's attempt holds these locks first, so what is read here stays
 * true until the transaction ends. With `withOperation`, the line's pending operation is read too.
 */
export async function lockForAnswer(trx: Knex, job: LineJob, attemptId: string | null, withOperation: boolean) {
  const open = `select status = 'open' from supplier_attempts where id = ?`;
  const held = await lockLine(trx, job.bookingId, job.lineId, {
    sql: withOperation ? `select json_build_object('open', (${open}), 'operation', ${PENDING_OPERATION_SQL})` : open,
    bindings: [attemptId ?? ''],
  });
  const read = (withOperation ? held?.read : { open: held?.read, operation: null }) as
    { open: boolean | null; operation: HeldOperation | null } | undefined;
  return { held, attemptOpen: read?.open === true, op: read?.operation ?? null };
}

/**
 * An answer that is unknown (a timeout, a lost answer): the line goes to reconciliation-required if
 * it still waits on the attempt. A workflow adapter contacts nobody: its failure sent nothing, and
 * the failed job is retried as unsent work.
 */
export async function unknownAnswer(
  trx: Knex,
  job: LineJob,
  attemptId: string | null,
  outcome: Unknown,
  locked: LockedLine,
  closer?: AttemptCloser,
  op?: HeldOperation,
): Promise<ExecutionResult> {
  if (attemptId && (await lineInterrupted(trx, job.bookingId, job.lineId, attemptId, outcome.cause, locked, closer, op))) {
    return 'reconciliation-required';
  }
  throw new Error(outcome.cause);
}

/** An answer after someone else closed the attempt: evidence for whoever reconciles the line, in its events; the line does not move. */
export async function lateAnswer(
  trx: Knex,
  job: LineJob,
  attemptId: string | null,
  outcome: unknown,
  operation?: HeldOperation['kind'],
): Promise<ExecutionResult> {
  await appendEvent(trx, {
    bookingId: job.bookingId,
    lineId: job.lineId,
    action: 'line.late-supplier-answer',
    actor: SYSTEM,
    detail: { attemptId, ...(operation ? { operation } : {}), outcome },
  });
  return 'outcome-recorded-for-reconciliation';
}

/** How an answer closes its attempt: its kind, the supplier's reference if it gave one, and the answer itself. */
export function answerClose(outcome: { kind: string; providerReference?: string | null } | Unknown): AttemptClose {
  if (isUnknown(outcome)) return { status: 'unknown', detail: { cause: outcome.cause } };
  return { status: outcome.kind, providerReference: outcome.providerReference ?? null, detail: outcome };
}

/** Runs one line's operation through the supplier-call engine. */
export function runLineFlow<S extends { attemptId: string | null }, O extends { kind: string }>(
  db: Knex,
  flow: SupplierCallFlow<S, O, ExecutionResult>,
  opts: ExecutionOptions,
  context: Record<string, unknown>,
): Promise<ExecutionResult> {
  return runSupplierCall(db, flow, { timeoutMs: opts.timeoutMs, lateAnswerMs: opts.lateAnswerMs, logger: opts.logger, context });
}
