import type { Knex } from 'knex';
import { z } from 'zod';
import type { Actor } from '../auth/actor';
import type { Principal } from '../auth/principal';
import { appendEvent } from '../bookings/booking-events';
import { DailyCapSchema, CampaignSchema } from '../campaigns/campaign-schemas';
import { findCampaign } from '../campaigns/campaign-store';
import { toMinor } from '../db/knex';
import { badRequest, conflict, notFound } from '../errors';
import { dateOnly } from '../dates';
import { clockedNow, readOffsetDays } from '../workspaces/sandbox-clock';
import { recordCapChange } from './daily-cap-history';

/** The time zone a daily cap counts its days in: the days delivery is reported in. */
export const DAILY_CAP_TIME_ZONE = 'UTC';

/** A change of daily caps, as the REST body and the governed action's parameters both carry it. */
export const DAILY_CAP_FIELDS = {
  /** The campaign's version as the caller last read it. */
  expectedVersion: z.number().int().min(0),
  /** The campaign's cap (its lines together); null removes it, omitted leaves it. */
  dailyCapMinor: DailyCapSchema.nullable().optional(),
  /** Booked lines' caps; null removes one. */
  lines: z
    .array(z.strictObject({ lineId: z.uuid(), dailyCapMinor: DailyCapSchema.nullable() }))
    .max(100)
    .refine((ls) => new Set(ls.map((l) => l.lineId.toLowerCase())).size === ls.length, 'each line at most once')
    .default([]),
  note: z.string().trim().min(1).max(2000).optional(),
};
const changesSomething = (b: { dailyCapMinor?: number | null; lines: unknown[] }) => b.dailyCapMinor !== undefined || b.lines.length > 0;
const CHANGES_SOMETHING = { path: ['lines'], message: "change the campaign's cap or at least one line's" };

export const DailyCapsRequestSchema = z
  .strictObject(DAILY_CAP_FIELDS)
  .refine(changesSomething, CHANGES_SOMETHING)
  .meta({ id: 'DailyCapsRequest' });
export const DailyCapsParametersSchema = z
  .strictObject({ campaignId: z.uuid(), ...DAILY_CAP_FIELDS })
  .refine(changesSomething, CHANGES_SOMETHING);
export type DailyCapsRequest = z.infer<typeof DailyCapsRequestSchema>;

export const DailyCapsSchema = z
  .object({
    campaign: CampaignSchema,
    timeZone: z.literal(DAILY_CAP_TIME_ZONE),
    lines: z.array(
      z.object({ lineId: z.uuid(), bookingId: z.uuid(), budgetMinor: z.number().int(), dailyCapMinor: z.number().int().nullable() }),
    ),
  })
  .meta({ id: 'DailyCaps' });
export type DailyCaps = z.infer<typeof DailyCapsSchema>;

/**
 * Sets a campaign's and its booked lines' daily caps, at the campaign's version, in one
 * transaction: the campaign's version moves, each changed line's booking records
 * `line.daily-cap-changed` (from, to, by whom). A cap only holds spend back, so it commits no
 * money. A line not booked in this campaign is 400, a cap over the line's budget 400, a stale
 * version 409; nothing changes then.
 */
export async function setDailyCaps(db: Knex, p: Principal, actor: Actor, campaignId: string, body: DailyCapsRequest): Promise<DailyCaps> {
  return db.transaction(async (trx) => {
    const campaign = await findCampaign(trx, p, campaignId, { forUpdate: true });
    if (!campaign) throw notFound();
    if (campaign.version !== body.expectedVersion) {
      throw conflict(
        `The campaign is at version ${campaign.version}, not ${body.expectedVersion}. Read it again before acting.`,
        'version_conflict',
      );
    }
    const lines = (await trx('booking_lines as l')
      .join('bookings as b', 'b.id', 'l.booking_id')
      .where({ 'b.campaign_id': campaign.id, 'b.advertiser_id': p.advertiserId })
      .forUpdate()
      .select('l.id', 'l.booking_id', 'l.budget_minor', 'l.daily_cap_minor')) as Array<{
      id: string;
      booking_id: string;
      budget_minor: string;
      daily_cap_minor: string | null;
    }>;
    const byId = new Map(lines.map((l) => [l.id, l]));
    body.lines.forEach((change, i) => {
      const line = byId.get(change.lineId.toLowerCase());
      if (!line) throw badRequest(`lines.${i}.lineId is not a booked line of this campaign.`, undefined, 'line_not_in_campaign');
      if (change.dailyCapMinor !== null && change.dailyCapMinor > toMinor(line.budget_minor)) {
        throw badRequest(
          `lines.${i}.dailyCapMinor is over the line's budget of ${toMinor(line.budget_minor)}.`,
          undefined,
          'daily_cap_over_budget',
        );
      }
    });
    // A change holds from today on the campaign's clock: the days before keep the cap they had.
    const effectiveDay = dateOnly(clockedNow(campaign.executionMode, await readOffsetDays(trx, p.advertiserId)));
    if (body.dailyCapMinor !== undefined) {
      await recordCapChange(trx, campaign.id, {
        lineId: null,
        effectiveDay,
        fromMinor: campaign.dailyCapMinor ?? null,
        toMinor: body.dailyCapMinor,
      });
    }
    const [updated] = await trx('campaigns')
      .where({ id: campaign.id })
      .update({
        ...(body.dailyCapMinor !== undefined ? { daily_cap_minor: body.dailyCapMinor === null ? null : String(body.dailyCapMinor) } : {}),
        version: trx.raw('version + 1'),
        updated_at: trx.fn.now(),
      })
      .returning(['version', 'daily_cap_minor']);
    for (const change of body.lines) {
      const line = byId.get(change.lineId.toLowerCase())!;
      const from = line.daily_cap_minor === null ? null : toMinor(line.daily_cap_minor);
      await trx('booking_lines')
        .where({ id: line.id })
        .update({ daily_cap_minor: change.dailyCapMinor === null ? null : String(change.dailyCapMinor) });
      line.daily_cap_minor = change.dailyCapMinor === null ? null : String(change.dailyCapMinor);
      await recordCapChange(trx, campaign.id, { lineId: line.id, effectiveDay, fromMinor: from, toMinor: change.dailyCapMinor });
      await appendEvent(trx, {
        bookingId: line.booking_id,
        lineId: line.id,
        action: 'line.daily-cap-changed',
        actor,
        detail: { from, to: change.dailyCapMinor, timeZone: DAILY_CAP_TIME_ZONE, ...(body.note ? { note: body.note } : {}) },
      });
    }
    return {
      campaign: {
        ...campaign,
        version: updated.version as number,
        dailyCapMinor: updated.daily_cap_minor === null ? null : toMinor(updated.daily_cap_minor),
      },
      timeZone: DAILY_CAP_TIME_ZONE,
      lines: lines.map((l) => ({
        lineId: l.id,
        bookingId: l.booking_id,
        budgetMinor: toMinor(l.budget_minor),
        dailyCapMinor: l.daily_cap_minor === null ? null : toMinor(l.daily_cap_minor),
      })),
    };
  });
}
