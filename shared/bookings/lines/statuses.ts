import type { LineOperationKind } from '../../adapters/adapter';

/** Every status a line may be in (the spec names them; docs/bookings.md explains each). */
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

/** Every supplier operation a line goes through: its booking, then whatever is asked of it in flight. */
export type LineOperation = 'book' | LineOperationKind;
