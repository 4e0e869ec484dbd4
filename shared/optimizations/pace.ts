import type { Knex } from 'knex';
import { toMinor } from '../db/knex';
import { linesOffPace, type LinePacing } from '../delivery/delivery-figures';

/**
 * What accepting a pacing suggestion means: a governed action on the running booking, prepared
 * and carried out through `campaign.amend` or `campaign.pause`, so a person approves it there.
 */
export interface GovernedProposal {
  type: 'governed-action';
  action: 'campaign.amend' | 'campaign.pause';
  parameters: Record<string, unknown>;
}

export interface PaceSuggestion {
  kind: 'move-budget-from-slow-line' | 'pause-fast-line';
  subject: string;
  reason: string;
  figures: Record<string, unknown>;
  change: GovernedProposal;
}

interface RunningLine {
  lineId: string;
  budgetMinor: number;
}

/** Splits `amount` over `weights` in whole minor units, the remainder to the first ones. */
function split(amount: number, weights: number[]): number[] {
  const total = weights.reduce((s, w) => s + w, 0);
  const shares = weights.map((w) => (total > 0 ? Math.floor((amount * w) / total) : 0));
  let rest = amount - shares.reduce((s, x) => s + x, 0);
  for (let i = 0; rest > 0; i = (i + 1) % shares.length, rest--) shares[i]! += 1;
  return shares;
}

/**
 * The pacing rules, pure over the facts: a line under pace gives what it is projected not to
 * spend to the booking's other running lines that are not under pace, in proportion to their
 * budgets (one `campaign.amend`, the booking's total unchanged); a line over pace, which will
 * run out of budget before its flight ends, proposes pausing the campaign (`campaign.pause`).
 */
export function paceSuggestions(
  campaignId: string,
  booking: { version: number; lines: RunningLine[] },
  offPace: LinePacing[],
): PaceSuggestion[] {
  const out: PaceSuggestion[] = [];
  const under = new Set(offPace.filter((l) => l.pacing.status === 'under').map((l) => l.lineId));
  for (const l of offPace) {
    const figures = {
      line: { bookingLineId: l.lineId, channel: l.channel, adapterKey: l.adapterKey, budgetMinor: l.budgetMinor },
      deliveredSpendMinor: l.deliveredSpendMinor,
      pacing: l.pacing,
    };
    if (l.pacing.status === 'under') {
      const shortfall = l.budgetMinor - Math.max(l.pacing.projectedSpendMinor, l.deliveredSpendMinor);
      const others = booking.lines.filter((o) => o.lineId !== l.lineId && !under.has(o.lineId));
      if (shortfall <= 0 || others.length === 0) continue;
      const shares = split(
        shortfall,
        others.map((o) => o.budgetMinor),
      );
      const lines = [
        { lineId: l.lineId, budgetMinor: l.budgetMinor - shortfall },
        ...others.map((o, i) => ({ lineId: o.lineId, budgetMinor: o.budgetMinor + shares[i]! })),
      ];
      out.push({
        kind: 'move-budget-from-slow-line',
        subject: l.lineId,
        reason: `The ${l.channel} line (${l.adapterKey}) is delivering at ${l.pacing.ratio} of its expected pace and is projected to leave ${shortfall} GBP minor units unspent; move them to the booking's other running lines, in proportion to their budgets.`,
        figures: { ...figures, movedMinor: shortfall },
        change: { type: 'governed-action', action: 'campaign.amend', parameters: { campaignId, expectedVersion: booking.version, lines } },
      });
    } else if (l.pacing.status === 'over') {
      out.push({
        kind: 'pause-fast-line',
        subject: l.lineId,
        reason: `The ${l.channel} line (${l.adapterKey}) is delivering at ${l.pacing.ratio} of its expected pace and will run out of budget before its flight ends; pause the campaign while its pacing is reviewed.`,
        figures,
        change: {
          type: 'governed-action',
          action: 'campaign.pause',
          parameters: { campaignId, note: `Pacing: the ${l.channel} line is at ${l.pacing.ratio} of its expected pace.` },
        },
      });
    }
  }
  return out;
}

/** The campaign's pacing suggestions, from its running booking and its lines' delivery. */
export async function paceFacts(db: Knex, advertiserId: string, campaignId: string, tolerance: number): Promise<PaceSuggestion[]> {
  const booking = await db('bookings')
    .where({ campaign_id: campaignId, advertiser_id: advertiserId })
    .whereNull('closed_out_at')
    .orderBy([
      { column: 'submitted_at', order: 'desc' },
      { column: 'id', order: 'desc' },
    ])
    .first('id', 'version');
  if (!booking) return [];
  const running = await db('booking_lines')
    .where({ booking_id: booking.id, status: 'confirmed' })
    .orderBy('position')
    .select('id', 'budget_minor');
  const offPace = (await linesOffPace(db, advertiserId, db.select(db.raw('?::uuid', [campaignId])), tolerance)).filter((l) =>
    running.some((r) => r.id === l.lineId),
  );
  return paceSuggestions(
    campaignId,
    { version: Number(booking.version), lines: running.map((r) => ({ lineId: String(r.id), budgetMinor: toMinor(r.budget_minor) })) },
    offPace,
  );
}
