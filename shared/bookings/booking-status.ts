import type { LineStatus } from './lines/state';

export const BOOKING_STATUSES = ['queued', 'in-progress', 'confirmed', 'partially-confirmed', 'rejected', 'stopping', 'stopped'] as const;
export type BookingStatus = (typeof BOOKING_STATUSES)[number];

/**
 * How many of a booking's lines are in each status (`bookings.line_counts`). A booking's status
 * follows from them by the database function `booking_status_of` (its migration states the
 * rule), which the statement that changes a line applies: see lines/store.ts.
 */
export type LineCounts = Partial<Record<LineStatus, number>>;
