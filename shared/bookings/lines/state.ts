import { conflict } from '../../errors';
import { lineEdges } from './operations';
import { LINE_STATUSES, type LineStatus } from './statuses';

export { operationStates } from './operations';

export { LINE_STATUSES, type LineStatus, type LineOperation } from './statuses';

/**
 * The edges a line may take (docs/bookings.md explains each), generated from the operations'
 * declarations (lines/operations.ts). Anything else is refused with 409 and changes nothing.
 */
const EDGES = lineEdges(LINE_STATUSES);

export function canMove(from: LineStatus, to: LineStatus): boolean {
  return EDGES[from].includes(to);
}

export function assertMove(from: LineStatus, to: LineStatus): void {
  if (!canMove(from, to)) {
    throw conflict(`A line that is ${from} cannot become ${to}.`, 'invalid_transition', 'terminal');
  }
}

/** Lines still needing someone (a worker, staff or an operator) to act. */
export const OPEN_LINE_STATUSES: readonly LineStatus[] = ['queued', 'in-progress', 'reconciliation-required', 'stop-requested', 'stopping'];
export const isOpen = (s: LineStatus) => OPEN_LINE_STATUSES.includes(s);

/** Why a stopped line is stopped, and so whether it may run again. */
export type StopKind = 'pause' | 'end' | 'staged';

export interface LineStop {
  kind: StopKind;
  requestedAt?: string;
  by?: string;
  note?: string;
}
