import type { AdapterContext } from '../../adapters/adapter';
import type { Logger } from '../../logger';

/** What running one line's supplier call came to (a booking's, or a later operation's). */
export type ExecutionResult =
  | 'skipped'
  | 'awaiting-staff'
  | 'reconciliation-required'
  | 'confirmed'
  | 'rejected'
  | 'stopped'
  | 'outcome-recorded-for-reconciliation'
  /** An operation on a booked line (pause, resume, stop, budget change) done, or refused, by its supplier. */
  | 'applied'
  | 'refused'
  /** The supplier is still working on the booking: the line waits in progress on its task. */
  | 'pending';

/** How a line's supplier call is run. */
export interface ExecutionOptions {
  timeoutMs: number;
  /** How long a timed-out call's answer is still waited for, and kept as late evidence. */
  lateAnswerMs?: number;
  context: AdapterContext;
  logger: Logger;
}
