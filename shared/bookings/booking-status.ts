import type { LineStatus } from './line-state';
import { LINE_STATUSES, isOpen } from './line-state';

export const BOOKING_STATUSES = ['queued', 'in-progress', 'confirmed', 'partially-confirmed', 'rejected', 'stopping', 'stopped'] as const;
export type BookingStatus = (typeof BOOKING_STATUSES)[number];

/**
 * A booking's status follows from its lines:
 * all queued → queued; any other open line → in-progress (stopping while only stops are open);
 * all confirmed → confirmed; all rejected → rejected; all stopped → stopped;
 * otherwise (some confirmed, the rest rejected or stopped) → partially-confirmed.
 */
export function bookingStatusOf(lines: readonly LineStatus[]): BookingStatus {
  if (lines.length === 0) return 'queued';
  if (lines.every((s) => s === 'queued')) return 'queued';
  const open = lines.filter(isOpen);
  if (open.length) {
    return open.every((s) => s === 'stop-requested' || s === 'stopping') ? 'stopping' : 'in-progress';
  }
  if (lines.every((s) => s === 'confirmed')) return 'confirmed';
  if (lines.every((s) => s === 'rejected')) return 'rejected';
  if (lines.every((s) => s === 'stopped')) return 'stopped';
  if (lines.some((s) => s === 'confirmed')) return 'partially-confirmed';
  // Only rejected and stopped lines: nothing is running and nothing was bought.
  return lines.some((s) => s === 'stopped') ? 'stopped' : 'rejected';
}

/** How many of a booking's lines are in each status (`bookings.line_counts`). */
export type LineCounts = Partial<Record<LineStatus, number>>;

/**
 * The same rule from the counts a booking keeps; null when the counts cannot be right (a
 * negative count, an unknown status): the caller counts the lines again.
 */
export function bookingStatusOfCounts(counts: LineCounts): BookingStatus | null {
  const lines: LineStatus[] = [];
  for (const [status, n] of Object.entries(counts)) {
    if (!(LINE_STATUSES as readonly string[]).includes(status) || !Number.isInteger(n) || n! < 0) return null;
    for (let i = 0; i < n!; i++) lines.push(status as LineStatus);
  }
  return bookingStatusOf(lines);
}
