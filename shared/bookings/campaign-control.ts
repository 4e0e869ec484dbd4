import type { Knex } from 'knex';
import { firstPrepared } from '../db/knex';
import { recordEvent } from '../events/record';
import { z } from 'zod';
import type { Actor } from '../auth/actor';
import type { Principal } from '../auth/principal';
import { findCampaign } from '../campaigns/campaign-store';
import { openBookingsOf } from '../campaigns/open-booking';
import { conflict, notFound } from '../errors';
import type { JobMessage } from '../queues/jobs';
import { BookingSchema, type Booking } from './booking-schemas';
import { findBookingById, type LineRow } from './booking-store';
import { alreadyDone, controlRefusal, endsAtOnce, requestControl, requestControls, type Control } from './lines/control';
import { lockLine } from './lines/store';

export const SkippedLineSchema = z.object({ lineId: z.uuid(), status: z.string(), reason: z.string() }).meta({ id: 'SkippedLine' });

/** A campaign's pause, resume or stop: the booking after it, the lines asked, and those that could not take it, with why. */
export const CampaignControlResultSchema = z
  .object({ booking: BookingSchema, requested: z.array(z.uuid()), skipped: z.array(SkippedLineSchema) })
  .meta({ id: 'CampaignControlResult' });

export interface CampaignControlResult {
  booking: Booking;
  requested: string[];
  skipped: Array<{ lineId: string; status: string; reason: string }>;
  queued: JobMessage[];
}

/** The campaign's open booking's id, or 409 when nothing of it is running. */
export async function openBookingOf(trx: Knex, p: Principal, campaignId: string): Promise<string> {
  const campaign = await findCampaign(trx, p, campaignId);
  if (!campaign) throw notFound();
  const open = await firstPrepared<{ id: string }>(trx, openBookingsOf(trx, campaign.id).select('b.id'));
  if (!open) throw conflict('The campaign has no open booking: launch it first, or it has ended.', 'not_booked', 'terminal');
  return open.id;
}

/**
 * Pauses, resumes or stops every line of the campaign's open booking that can take it, in one
 * transaction; the others are reported with the reason. The lines are all locked first, in id
 * order, then the booking (the global lock order), so concurrent requests for one campaign run
 * one after the other: the first asks the suppliers, the rest find it asked. 409 when no line
 * could take it and none had it already.
 */
const CONTROL_EVENT = { pause: 'campaign.paused', resume: 'campaign.resumed', stop: 'campaign.stopped' } as const;

export async function controlCampaign(
  db: Knex,
  p: Principal,
  actor: Actor,
  campaignId: string,
  control: Control,
  note?: string,
): Promise<CampaignControlResult> {
  return db.transaction(async (trx) => {
    const bookingId = await openBookingOf(trx, p, campaignId);
    const lines = (await trx('booking_lines').where({ booking_id: bookingId }).orderBy('id').forUpdate()) as LineRow[];
    const requested: string[] = [];
    const skipped: CampaignControlResult['skipped'] = [];
    const queued: JobMessage[] = [];
    let already = 0;
    const together: LineRow[] = [];
    for (const line of [...lines].sort((a, b) => a.position - b.position)) {
      const refusal = controlRefusal(line, control);
      if (refusal) {
        if (alreadyDone(line, control)) already++;
        skipped.push({ lineId: line.id, status: line.status, reason: refusal });
        continue;
      }
      requested.push(line.id);
      if (!endsAtOnce(line, control)) {
        together.push(line);
        continue;
      }
      const locked = (await lockLine(trx, bookingId, line.id))!;
      queued.push(...(await requestControl(trx, locked, control, actor, { note })).queued);
    }
    // Every line its supplier is asked of, in one statement.
    queued.push(...(await requestControls(trx, bookingId, together, control, actor, note)).map((r) => r.message));
    if (!requested.length && !already) {
      throw conflict(
        `No line of the campaign can be ${PAST[control]} now: ${skipped.map((s) => `${s.lineId} (${s.status}): ${s.reason}`).join(' ')}`,
        'invalid_transition',
        'terminal',
      );
    }
    const booking = (await findBookingById(trx, bookingId))!;
    if (requested.length) {
      // The campaign's state is its open booking's: the event carries that booking's version.
      await recordEvent(trx, {
        workspaceId: p.advertiserId,
        type: CONTROL_EVENT[control],
        subjectId: campaignId,
        subjectVersion: booking.version,
        body: { campaignId, bookingId, lines: requested.length, actor: actor.actor, source: actor.source },
      });
    }
    return { booking, requested, skipped, queued };
  });
}

const PAST: Record<Control, string> = { pause: 'paused', resume: 'resumed', stop: 'stopped' };
