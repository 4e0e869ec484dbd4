import { z } from 'zod';
import type { LineStatus, StopKind } from './lines/state';
import { dateOnly } from '../dates';
import { clockedNow } from '../workspaces/sandbox-clock';

/**
 * What a person would say a booking, its lines and its campaign are doing, derived from the
 * spec's statuses (which stay as they are) and the flight on the booking's clock:
 * - a line: `booking` (with its supplier), `scheduled` (booked, flight not started), `running`,
 *   `paused`, `ended` (stopped for good, ending, or its flight over), `refused` (the supplier
 *   said no) or `needs-attention` (an outcome a person must settle);
 * - a booking: `needs-attention` when any line does, it is late, or every line was refused; else
 *   `booking` while any line is with its supplier; `ended` once the flight is over or no line can
 *   run again; `running` when a line runs; `scheduled` before the flight; `paused` when every
 *   line that can run is paused;
 * - a campaign: its latest booking's, or `not-launched`.
 */
export const LINE_STATES = ['booking', 'scheduled', 'running', 'paused', 'ended', 'refused', 'needs-attention'] as const;
export type LineState = (typeof LINE_STATES)[number];
export const BOOKING_STATES = ['booking', 'scheduled', 'running', 'paused', 'ended', 'needs-attention'] as const;
export type BookingState = (typeof BOOKING_STATES)[number];
export const CAMPAIGN_STATES = ['not-launched', ...BOOKING_STATES] as const;
export type CampaignState = (typeof CAMPAIGN_STATES)[number];

export const LineStateSchema = z.enum(LINE_STATES).describe('What the line is doing, derived from its status and the flight.');
export const BookingStateSchema = z.enum(BOOKING_STATES).describe('What the booking is doing, derived from its lines and the flight.');
export const CampaignStateSchema = z
  .enum(CAMPAIGN_STATES)
  .describe("What the campaign is doing: its latest booking's state, or not-launched.");

export interface Flight {
  started: boolean;
  ended: boolean;
}

const AWAITING_SUPPLIERS: readonly string[] = ['queued', 'in-progress', 'stopping'];
/** A booking still with its suppliers past the time it should have been confirmed by. */
export const isOverdue = (status: string, confirmationDueAt: Date, now: Date): boolean =>
  AWAITING_SUPPLIERS.includes(status) && confirmationDueAt.getTime() < now.getTime();

/** A booking's flight as of `now`, on its clock (the workspace's sandbox clock for a sandbox booking). */
export function flightOf(
  b: { start_date: string | Date; end_date: string | Date; execution_mode: 'sandbox' | 'live'; clock_offset_days?: unknown },
  now: Date,
): Flight {
  const today = dateOnly(clockedNow(b.execution_mode, Number(b.clock_offset_days ?? 0), now));
  return { started: dateOnly(b.start_date) <= today, ended: dateOnly(b.end_date) < today };
}

export function lineState(line: { status: LineStatus; stop: { kind: StopKind } | null }, flight: Flight): LineState {
  switch (line.status) {
    case 'reconciliation-required':
      return 'needs-attention';
    case 'rejected':
      return 'refused';
    case 'queued':
    case 'in-progress':
      return 'booking';
    case 'stop-requested':
    case 'stopping':
      return 'ended';
    case 'stopped':
      return line.stop?.kind === 'pause' || line.stop?.kind === 'staged' ? (flight.ended ? 'ended' : 'paused') : 'ended';
    default:
      return flight.ended ? 'ended' : flight.started ? 'running' : 'scheduled';
  }
}

export function bookingState(lines: LineState[], opts: { overdue: boolean; flightEnded: boolean }): BookingState {
  if (opts.overdue || lines.includes('needs-attention') || (lines.length > 0 && lines.every((l) => l === 'refused'))) {
    return 'needs-attention';
  }
  if (lines.includes('booking')) return 'booking';
  const live = lines.filter((l) => l !== 'refused' && l !== 'ended');
  if (opts.flightEnded || live.length === 0) return 'ended';
  if (live.includes('running')) return 'running';
  if (live.includes('scheduled')) return 'scheduled';
  return 'paused';
}
