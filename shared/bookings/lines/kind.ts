import type { Knex } from 'knex';
import { isUnknown, type AttemptClose, type AttemptCloser, type Held, type Unknown } from '../../suppliers/attempts';
import type { SqlPart } from '../../db/knex';
import type { LineRow } from '../booking-store';
import type { LineAnswer } from './batch';
import type { ExecutionResult } from './execution';
import type { HeldOperation } from './operation-store';
import type { LockedLine } from './store';
import type { LineOperation } from './state';

/**
 * What a line's supplier job is made of, and what each kind of job (a booking, lines/book.ts; an
 * operation asked of a booked line, lines/in-flight.ts) declares for the stages in lines/flow.ts.
 */

/** A line's supplier job: its booking's (`book-line`), or an operation's asked of the line later (`line-operation`). */
export interface LineJob {
  bookingId: string;
  lineId: string;
  operationId?: string;
}

/** What a started call carries from stage to stage. */
export interface LineStart<Req, O extends Op = Op> {
  /** Null for work that calls no supplier (a workflow line). */
  attemptId: string | null;
  request: Req;
  /** The operation as read when it started; it changes only under its line's lock, by this job. */
  op: O;
}

/** A line as locked, with its pending operation as read then (for a booking's answer, none). */
export interface HeldLine<O extends Op = Op> {
  locked: LockedLine;
  op: O;
}

/** What `lock` reads with the line's locks, for `apply` in the same transaction. */
export type LockRead = HeldLine & Held;

/** An operation asked of a line as read with its lock; null for a booking, which has no operation record. */
type Op = HeldOperation | null;

/** What the line's lock reads for `begin`: the flight, an open attempt that makes the job a redelivery, and the job's operation. */
export interface BeginRead {
  start_date: string;
  end_date: string;
  open_attempt_id: string | null;
  booking_attempt_id?: string | null;
  operation?: HeldOperation | null;
}

/** The answers a kind settles itself; unknown, pending and workflow answers are settled alike for every kind. */
export type Definite<Out> = Exclude<Out, { kind: 'pending' | 'workflow' }>;

/**
 * What one kind of line job does differently (a booking, lines/book.ts, whose `O` is null; an
 * operation asked of a booked line, lines/in-flight.ts); every stage that uses it is written
 * once, in lines/flow.ts, and its usual steps are the batched statements in lines/batch.ts.
 */
export interface LineKind<Req, Out extends { kind: string }, O extends Op = Op> {
  /** The queue job that carries the call (the stuck-attempt sweep asks whether it is alive). */
  jobId(job: LineJob): string;
  /** What `begin` reads with the line's lock (`BeginRead`, as one JSON value). */
  read(trx: Knex, job: LineJob): { sql: string; bindings: readonly Knex.Value[] };
  /** The job's operation as read with its line: null for a booking, undefined when the line's pending operation is another's. */
  own(job: LineJob, line: LineRow, op: Op): O | undefined;
  /** What its supplier is asked. */
  request(line: LineRow, read: BeginRead, op: O, attemptId: string): Req;
  /** How a definite answer moves a sandbox line in the batched statement, and what the job returns; null: the locked step runs. */
  answer(start: LineStart<Req, O>, outcome: Definite<Out>): { result: ExecutionResult; change: LineAnswer } | null;
  /**
   * A live line's usual definite answer in a transaction of its own, which closes the attempt
   * (`close`, with the line's change) or is undone; null, or absent: the locked step runs.
   */
  answerAlone?(
    db: Knex,
    job: LineJob,
    start: LineStart<Req, O>,
    outcome: Definite<Out>,
    close: (source: string) => SqlPart,
  ): Promise<ExecutionResult | null>;
  /** A definite answer under the line's lock: the one place it moves its line, from the call or a pending task. */
  settle(
    trx: Knex,
    job: LineJob,
    start: Pick<LineStart<Req, O>, 'attemptId'>,
    outcome: Definite<Out>,
    held: HeldLine<O>,
    closer?: AttemptCloser,
  ): Promise<ExecutionResult>;
}

/** A line operation's kind: a booking has no operation record. */
export const kindOf = (op: HeldOperation | null | undefined): LineOperation => op?.kind ?? 'book';

/** What a line's events say of the operation an answer is to (nothing, for a booking). */
export const operationNamed = (op: HeldOperation | null | undefined) => (op ? { operation: op.kind, operationId: op.id } : {});

/** How an answer closes its attempt: its kind, the supplier's reference if it gave one, and the answer itself. */
export function answerClose(outcome: { kind: string; providerReference?: string | null } | Unknown): AttemptClose {
  if (isUnknown(outcome)) return { status: 'unknown', detail: { cause: outcome.cause } };
  return { status: outcome.kind, providerReference: outcome.providerReference ?? null, detail: outcome };
}
