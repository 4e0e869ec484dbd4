import { conflict } from '../errors';

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
  queued: ['in-progress', 'rejected', 'stop-requested'],
  // A native staged supplier creates the campaign paused: in-progress → stopped.
  'in-progress': ['confirmed', 'rejected', 'reconciliation-required', 'stop-requested', 'stopped'],
  'reconciliation-required': ['confirmed', 'rejected'],
  confirmed: ['stop-requested'],
  'stop-requested': ['stopping'],
  stopping: ['stopped'],
  rejected: [],
  stopped: [],
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
