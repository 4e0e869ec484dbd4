import { conflict } from '../errors';
import type { LineOperationKind } from '../adapters/adapter';

export const LINE_STATUSES = [
  'queued',
  'in-progress',
  'confirmed',
  'rejected',
  'reconciliation-required',
  'stop-requested',
  'stopping',
  'stopped',
] as const;
export type LineStatus = (typeof LINE_STATUSES)[number];

/**
 * The edges a line may take (the spec names the states; docs/bookings.md explains each edge).
 * Anything else is refused with 409 and changes nothing.
 */
const EDGES: Record<LineStatus, readonly LineStatus[]> = {
  // Stopping a line nobody has sent yet ends it at once (stop-requested → stopped).
  queued: ['in-progress', 'rejected', 'stop-requested'],
  // A native staged supplier creates the campaign paused (→ stopped), as a refused resume leaves it;
  // a workflow line that staff are booking may be stopped before they finish (→ stop-requested).
  'in-progress': ['confirmed', 'rejected', 'reconciliation-required', 'stop-requested', 'stopped'],
  // Resolved as the operation in doubt was or was not applied; or stopped whatever was booked.
  'reconciliation-required': ['confirmed', 'rejected', 'stopped', 'stop-requested'],
  // Pause or stop requested; or a budget change whose outcome is unknown.
  confirmed: ['stop-requested', 'reconciliation-required'],
  'stop-requested': ['stopping', 'stopped'],
  // Applied, refused (back to running), or unknown.
  stopping: ['stopped', 'confirmed', 'reconciliation-required'],
  rejected: [],
  // Resumed (queued again), a paused line ended, or a paused line's budget change unknown.
  stopped: ['queued', 'stop-requested', 'reconciliation-required'],
};

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

/** Every supplier operation a line goes through: its booking, then whatever is asked of it in flight. */
export type LineOperation = 'book' | LineOperationKind;

/** Why a stopped line is stopped, and so whether it may run again. */
export type StopKind = 'pause' | 'end' | 'staged';

export interface LineStop {
  kind: StopKind;
  requestedAt?: string;
  by?: string;
  note?: string;
}

/**
 * Where an operation takes a line: the status it waits in once requested, while the supplier
 * call is in flight, and once the supplier applied it; a refusal (or a resolution finding it was
 * not applied) returns it to `refused`, or, for `from`, to the status it had when requested. A
 * budget change keeps the line's status throughout (a running line keeps running).
 */
export function operationStates(op: LineOperation, from: LineStatus) {
  switch (op) {
    case 'book':
      return { requested: 'queued', inFlight: 'in-progress', applied: 'confirmed', refused: 'rejected' } as const;
    case 'pause':
    case 'stop':
      return { requested: 'stop-requested', inFlight: 'stopping', applied: 'stopped', refused: from } as const;
    case 'resume':
      return { requested: 'queued', inFlight: 'in-progress', applied: 'confirmed', refused: 'stopped' } as const;
    case 'change-budget':
      return { requested: from, inFlight: from, applied: from, refused: from } as const;
  }
}
