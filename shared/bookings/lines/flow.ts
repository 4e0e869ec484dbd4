import type { Knex } from 'knex';
import { SYSTEM } from '../../auth/actor';
import type { AdapterContext, BookingOutcome, LineOperationOutcome, SupplierAdapter } from '../../adapters/adapter';
import { bookLineJobId } from '../../queues/jobs';
import { supplierQueueName } from '../../queues/names';
import {
  closeAttempt,
  interrupted,
  isUnknown,
  newAttemptId,
  runSupplierCall,
  type AttemptCloser,
  type SupplierCallFlow,
  type Unknown,
} from '../../suppliers/attempts';
import type { SubjectHandler } from '../../suppliers/stuck-attempts';
import { pendingTaskInsert } from '../../suppliers/supplier-tasks';
import { ItemFailure } from '../../db/batcher';
import { appendEvent } from '../booking-events';
import type { LineRow } from '../booking-store';
import { PENDING_OPERATION_SQL, type HeldOperation } from './operation-store';
import { lineInterrupted, operationFigures } from './settle';
import { operationStates } from './state';
import { changeLine, isStepAborted, lockLine } from './store';
import { lineBatchers, startSteps, type StartStep } from './batch';
import { BOOK } from './book';
import type { ExecutionOptions, ExecutionResult } from './execution';
import { IN_FLIGHT, type OperationRequest } from './in-flight';
import { OPERATIONS } from './operations';
import {
  answerClose,
  kindOf,
  operationNamed,
  type BeginRead,
  type Definite,
  type HeldLine,
  type LineJob,
  type LineKind,
  type LineStart,
  type LockRead,
} from './kind';

/**
 * One line's supplier job, its booking's or a later operation's, through the supplier-call engine
 * (shared/suppliers/attempts.ts): each stage is written once here, and what a kind of job does
 * differently is declared by `BOOK` (lines/book.ts) and `IN_FLIGHT` (lines/in-flight.ts).
 */

/** The supplier call for a line: the one place its adapter is asked, with the request the job's kind built. */
const askSupplier = (adapter: SupplierAdapter, start: LineStart<unknown>, ctx: AdapterContext) =>
  adapter.operations[kindOf(start.op)](start.request as never, ctx);

/** Where the job's operation (`op`; null for the line's booking) takes the line. */
const statesOf = (line: LineRow, op: HeldOperation | null) => operationStates(kindOf(op), op?.from_status ?? line.status);

/** Whether the line waits at `stage` of the job's operation. */
const waitsFor = (line: LineRow, op: HeldOperation | null, stage: 'requested' | 'inFlight') =>
  line.operation === kindOf(op) && line.status === statesOf(line, op)[stage];

const isDefinite = <Out extends { kind: string }>(o: Out | Unknown): o is Definite<Out> =>
  !isUnknown(o) && o.kind !== 'pending' && o.kind !== 'workflow';

const skipped = { kind: 'done' as const, result: 'skipped' as ExecutionResult };

const REDELIVERED = 'The operation was interrupted after it was sent; its outcome is unknown.';

function lineFlow<Req extends { executionMode: string }, Out extends BookingOutcome | LineOperationOutcome, O extends HeldOperation | null>(
  kind: LineKind<Req, Out, O>,
  adapter: SupplierAdapter,
  job: LineJob,
  ctx: AdapterContext,
) {
  const { bookingId, lineId } = job;
  /** The job's start, for the start statement (lines/batch.ts): a new attempt on the line of `adapterKey`. */
  const startOf = (adapterKey: string): StartStep => {
    const operationId = job.operationId ?? null;
    return { bookingId, lineId, operationId, adapterKey, attemptId: newAttemptId(), jobId: kind.jobId(job) };
  };
  const flow: SupplierCallFlow<LineStart<Req, O>, Out, ExecutionResult, LockRead> = {
    async begin(trx) {
      const locked = await lockLine(trx, job.bookingId, job.lineId, kind.read(trx, job));
      if (!locked) return skipped;
      const { line } = locked;
      const read = locked.read as BeginRead;
      const op = kind.own(job, line, read.operation ?? null);
      if (op === undefined) return skipped;
      const openId = read.open_attempt_id;
      if (openId) {
        // The job ran before and stopped without recording an answer: the supplier may have acted. It
        // never calls again; the attempt closes as interrupted and the line, if it still waits on
        // it, goes to a person.
        await closeAttempt(trx, openId, interrupted(REDELIVERED, 'redelivered'));
        const moved = await lineInterrupted(trx, job.bookingId, job.lineId, openId, REDELIVERED, locked, undefined, op ?? undefined);
        return { kind: 'done', result: moved ? 'reconciliation-required' : 'skipped' };
      }
      // A line not waiting for this job's operation has already been taken up (or finished): a duplicate delivery.
      if (!waitsFor(line, op, 'requested') || (op && op.status !== 'requested')) return skipped;
      if (!adapter.callsSupplier) return { kind: 'call', start: { attemptId: null, op, request: kind.request(line, read, op, '') } };

      // The start the lock-free path writes, as a batch of one under the lock: the statement that
      // moves the line to where its call is in flight opens its attempt (neither is written alone).
      const step = { ...startOf(line.adapter_key), locked: true, detail: op ? operationFigures(op) : {} };
      const [started] = await startSteps(trx, [step]);
      if (started instanceof ItemFailure) throw started.cause as Error;
      // Under the lock the line is as read, and the statement's conditions are the ones checked above.
      if (!started) throw new Error(`line ${lineId} waits for its job but its start statement did not take it`);
      return { kind: 'call', start: { attemptId: step.attemptId, op, request: kind.request(line, read, op, step.attemptId) } };
    },

    async tryBegin(db) {
      // The usual start: the line waiting for this job, with no attempt open, moved to where its
      // call is in flight by the statement that opens its attempt (with other jobs' starts, when
      // several are waiting). Anything else takes `begin`.
      if (!adapter.callsSupplier) return null;
      const step = startOf(adapter.descriptor.key);
      const started = await lineBatchers(db).start.submit(step);
      if (!started) return null;
      const op = started.op as O;
      const { attemptId } = step;
      return {
        kind: 'call',
        start: { attemptId, op, request: kind.request(started.line, { ...started.read, open_attempt_id: null }, op, attemptId) },
      };
    },

    call: (start, deadline) => askSupplier(adapter, start, { ...ctx, ...deadline }) as Promise<Out>,

    async tryApply(db, start, outcome, close) {
      // The usual answer, to the attempt the line still waits on, as one statement; anything else takes the locked step.
      if (!isDefinite(outcome)) return null;
      try {
        if (start.request.executionMode !== 'sandbox') return (await kind.answerAlone?.(db, job, start, outcome, close)) ?? null;
        // A sandbox line moves no money: its answer may go in one statement with other jobs' answers.
        const answered = OPERATIONS[kindOf(start.op)].batches ? kind.answer(start, outcome) : null;
        if (!answered) return null;
        const step = { bookingId, lineId, operationId: start.op?.id ?? null, attemptId: start.attemptId!, close: flow.closeWith(outcome) };
        return (await lineBatchers(db).answer.submit({ ...step, ...answered.change })) ? answered.result : null;
      } catch (err) {
        if (isStepAborted(err)) return null;
        throw err;
      }
    },

    async lock(trx, start) {
      // Every path that closes a line's attempt takes these locks first, so what is read with them
      // stays true to the commit. No line (never expected): the engine closes the attempt itself.
      const held = await lockLine(trx, job.bookingId, job.lineId, {
        sql: `select json_build_object('open', (select status = 'open' from supplier_attempts where id = ?), 'operation', ${PENDING_OPERATION_SQL})`,
        bindings: [start.attemptId ?? ''],
      });
      const read = held?.read as { open: boolean | null; operation: HeldOperation | null } | undefined;
      return held ? { locked: held, attemptOpen: read!.open === true, op: read!.operation } : undefined;
    },

    closeWith: (outcome) =>
      !isUnknown(outcome) && outcome.kind === 'workflow'
        ? { status: 'workflow', detail: { steps: (outcome as { steps: unknown[] }).steps.length } }
        : answerClose(outcome),

    async apply(trx, start, outcome, held, closer) {
      // The line as `lock` read it is still current: nothing has changed it since.
      const op = held ? kind.own(job, held.locked.line, held.op) : undefined;
      if (!held || op === undefined || !waitsFor(held.locked.line, op, start.attemptId ? 'inFlight' : 'requested')) {
        return flow.late(trx, start, outcome);
      }
      return applyAnswer(trx, kind, job, start, outcome, { locked: held.locked, op }, closer);
    },

    async late(trx, start, outcome) {
      // Someone else closed the attempt: the answer is evidence for whoever reconciles the line; the line does not move.
      const operation = start.op ? { operation: start.op.kind } : {};
      const detail = { attemptId: start.attemptId, ...operation, outcome };
      await appendEvent(trx, { bookingId: job.bookingId, lineId: job.lineId, action: 'line.late-supplier-answer', actor: SYSTEM, detail });
      return 'outcome-recorded-for-reconciliation';
    },
  };
  return flow;
}

/**
 * Moves a line on its supplier's answer, under the line's lock: the one place an answer changes
 * its line, whether it came back from the call or later (a pending supplier task's final answer).
 */
async function applyAnswer<Req, Out extends BookingOutcome | LineOperationOutcome, O extends HeldOperation | null>(
  trx: Knex,
  kind: LineKind<Req, Out, O>,
  job: LineJob,
  start: Pick<LineStart<Req, O>, 'attemptId' | 'request'>,
  outcome: Out | Unknown,
  held: HeldLine<O>,
  closer?: AttemptCloser,
): Promise<ExecutionResult> {
  const { bookingId, lineId } = job;
  const { locked, op } = held;
  const { attemptId } = start;
  if (isUnknown(outcome)) {
    // The line goes to a person if it still waits on the attempt. A workflow adapter contacts
    // nobody: its failure sent nothing, and the failed job is retried as unsent work.
    if (attemptId && (await lineInterrupted(trx, bookingId, lineId, attemptId, outcome.cause, locked, closer, op ?? undefined))) {
      return 'reconciliation-required';
    }
    throw new Error(outcome.cause);
  }
  const change = () => ({ bookingId, lineId, actor: SYSTEM, companionWrite: closer?.embed() });
  if (outcome.kind === 'pending') {
    // The supplier took the request and works on it: the line stays where the call left it, and
    // the task is asked about (or answers by webhook) until its final answer moves the line.
    const { taskId, supplierStatus } = outcome as Extract<Out, { kind: 'pending' }>;
    const operation = op ? { id: op.id, kind: op.kind, request: start.request as OperationRequest } : undefined;
    const task = { attemptId: attemptId!, bookingId, lineId, adapterKey: locked.line.adapter_key, outcome: { taskId, supplierStatus } };
    const detail = { ...operationNamed(op), attemptId, taskId, supplierStatus };
    await changeLine(
      trx,
      { ...change(), action: 'line.supplier-pending', writes: [pendingTaskInsert(trx, { ...task, operation })], detail },
      locked,
    );
    return 'pending';
  }
  if (outcome.kind === 'workflow') {
    const { steps } = outcome as Extract<Out, { kind: 'workflow' }>;
    const detail = { ...operationNamed(op), steps: steps.length };
    await changeLine(trx, { ...change(), patch: { workflow_steps: JSON.stringify(steps) }, action: 'line.awaiting-staff', detail }, locked);
    return 'awaiting-staff';
  }
  return kind.settle(trx, job, start, outcome as Definite<Out>, held, closer);
}

/**
 * A pending supplier task's final answer, for the line that waits on it (its lock held, with the
 * operation the task is for: none for a booking): moves the line as the same answer to the call would have.
 */
export const applyTaskAnswer = (
  trx: Knex,
  job: LineJob,
  start: Pick<LineStart<unknown>, 'attemptId' | 'request'>,
  outcome: BookingOutcome | LineOperationOutcome | Unknown,
  held: HeldLine,
) => applyAnswer(trx, (held.op ? IN_FLIGHT : BOOK) as LineKind<unknown, typeof outcome & { kind: string }>, job, start, outcome, held);

/**
 * Runs one line's supplier job (a booking's, or an operation's: `operationId`) through the
 * supplier-call engine: attempt committed before the call, the attempt id as the supplier's
 * idempotency key, the outcome recorded after. An unknown outcome (timeout, lost answer, crash)
 * sends the line to reconciliation; nothing is ever called twice.
 */
export function executeLineJob(db: Knex, adapter: SupplierAdapter, job: LineJob, opts: ExecutionOptions): Promise<ExecutionResult> {
  const options = { ...opts, context: job.operationId ? { lineId: job.lineId, operationId: job.operationId } : { lineId: job.lineId } };
  return job.operationId
    ? runSupplierCall(db, lineFlow(IN_FLIGHT, adapter, job, opts.context), options)
    : runSupplierCall(db, lineFlow(BOOK, adapter, job, opts.context), options);
}

/** How the stuck-attempt sweep takes over a line's attempt. */
export const lineAttempts: SubjectHandler = {
  async lock(trx, a) {
    await lockLine(trx, a.booking_id!, a.line_id!);
  },
  async interrupted(trx, a, reason) {
    await lineInterrupted(trx, a.booking_id!, a.line_id!, a.id, reason);
  },
  job: (a) => ({ queue: supplierQueueName(a.adapter_key), jobId: a.job_id ?? bookLineJobId(a.line_id!) }),
};
