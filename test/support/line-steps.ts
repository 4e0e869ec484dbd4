import type { Knex } from 'knex';
import type { BookingOutcome, LineOperationOutcome } from '../../shared/adapters/adapter';
import type { HeldOperation } from '../../shared/bookings/lines/operation-store';
import { recordAnswers, startSteps, type AnswerStep, type StartStep } from '../../shared/bookings/lines/batch';
import { BOOK } from '../../shared/bookings/lines/book';
import { IN_FLIGHT } from '../../shared/bookings/lines/in-flight';
import { answerClose } from '../../shared/bookings/lines/kind';
import { ItemFailure } from '../../shared/db/batcher';
import { bookLineJobId, lineOperationJobId } from '../../shared/queues/jobs';
import { newAttemptId } from '../../shared/suppliers/attempts';

/** A line's steps as its job builds them for the batched statements (shared/bookings/lines/batch.ts), taken by hand. */

type Line = { id: string; adapterKey: string };

/** The start of a line's booking, or of its operation `operationId`. */
export const startStep = (bookingId: string, line: Line, operationId: string | null = null): StartStep => ({
  bookingId,
  lineId: line.id,
  operationId,
  adapterKey: line.adapterKey,
  attemptId: newAttemptId(),
  jobId: operationId ? lineOperationJobId(operationId) : bookLineJobId(line.id),
});

/** A booking's definite answer, as the flow writes it for the started line (`s`). */
export function bookingAnswer(s: StartStep, outcome: Exclude<BookingOutcome, { kind: 'pending' | 'workflow' }>): AnswerStep {
  const { change } = BOOK.answer({ attemptId: s.attemptId, op: null, request: null as never }, outcome)!;
  return { bookingId: s.bookingId, lineId: s.lineId, operationId: null, attemptId: s.attemptId, close: answerClose(outcome), ...change };
}

/** An operation's definite answer, as the flow writes it for the started line (`s`) and its operation as started. */
export function operationAnswer(s: StartStep, op: HeldOperation, outcome: Extract<LineOperationOutcome, { kind: 'applied' | 'refused' }>) {
  const { change } = IN_FLIGHT.answer({ attemptId: s.attemptId, op, request: null as never }, outcome)!;
  return { bookingId: s.bookingId, lineId: s.lineId, operationId: op.id, attemptId: s.attemptId, close: answerClose(outcome), ...change };
}

/** A batch function's results, none of them a line's own failure after the statement. */
export function noneFailed<T>(results: Array<T | ItemFailure>): T[] {
  expect(results.filter((r) => r instanceof ItemFailure)).toEqual([]);
  return results as T[];
}

/** Books every line of a sandbox booking through the batched statements, each confirmed with the reference `ref` gives it. */
export async function confirmByStatements(
  db: Knex,
  booking: { id: string; lines: Line[] },
  ref = (lineId: string) => `ref-${lineId}`,
): Promise<void> {
  const starts = booking.lines.map((l) => startStep(booking.id, l));
  noneFailed(await startSteps(db, starts));
  const answers = starts.map((s) => bookingAnswer(s, { kind: 'confirmed', providerReference: ref(s.lineId) }));
  expect(noneFailed(await recordAnswers(db, answers)).every((l) => l?.status === 'confirmed')).toBe(true);
}
