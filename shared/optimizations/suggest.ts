import type { Knex } from 'knex';
import type { PlanLine } from '../campaigns/campaign-schemas';

/** What accepting a suggestion does: a plan amendment, exactly these lines at that plan version. */
export interface PlanAmendment {
  type: 'plan-amendment';
  planId: string;
  expectedVersion: number;
  lines: Array<Omit<PlanLine, 'id'>>;
  diff: Array<{ planLineId: string; channel: string; adapterKey: string; fromBudgetMinor: number; toBudgetMinor: number | null }>;
}

export interface Suggestion {
  kind: 'reallocate-rejected-budget' | 'remove-idle-line';
  subject: string;
  reason: string;
  figures: Record<string, unknown>;
  change: PlanAmendment;
}

interface LineFact {
  planLineId: string;
  bookingLineId: string;
  status: string;
  confirmedAt: Date | null;
}

export interface SuggestionInputs {
  plan: { id: string; version: number; lines: PlanLine[] };
  /** The latest booking's lines, by the plan line they were booked from. */
  booked: LineFact[];
  /** Latest day with a positive outcome, and latest pixel event, for the campaign's advertiser. */
  lastOutcomeDate: string | null;
  lastPixelEventAt: Date | null;
  now: Date;
  idleDays: number;
}

const DAY_MS = 86_400_000;
const strip = ({ id: _id, ...rest }: PlanLine) => rest;

function amendment(plan: SuggestionInputs['plan'], budgets: Map<string, number | null>): PlanAmendment {
  return {
    type: 'plan-amendment',
    planId: plan.id,
    expectedVersion: plan.version,
    lines: plan.lines
      .filter((l) => budgets.get(l.id) !== null)
      .map((l) => ({ ...strip(l), budgetMinor: budgets.get(l.id) ?? l.budgetMinor })),
    diff: plan.lines
      .filter((l) => budgets.has(l.id))
      .map((l) => ({
        planLineId: l.id,
        channel: l.channel,
        adapterKey: l.adapterKey,
        fromBudgetMinor: l.budgetMinor,
        toBudgetMinor: budgets.get(l.id)!,
      })),
  };
}

/** Splits an amount over weights in integer minor units; the remainder goes to the largest weights first. */
function prorate(amount: number, weights: number[]): number[] {
  const total = weights.reduce((s, w) => s + w, 0);
  const shares = weights.map((w) => Math.floor((amount * w) / total));
  let rest = amount - shares.reduce((s, x) => s + x, 0);
  const order = weights.map((w, i) => [w, i] as const).sort((a, b) => b[0] - a[0] || a[1] - b[1]);
  for (let k = 0; rest > 0; k = (k + 1) % order.length, rest--) shares[order[k]![1]]! += 1;
  return shares;
}

/**
 * The rules, pure over the facts: (1) a rejected line's budget moves to the confirmed lines,
 * pro rata; (2) a line confirmed idleDays ago with no outcome and no pixel event since is removed.
 */
export function suggest(i: SuggestionInputs): Suggestion[] {
  const planLines = new Map(i.plan.lines.map((l) => [l.id, l]));
  const booked = i.booked.filter((b) => planLines.has(b.planLineId));
  const confirmed = booked.filter((b) => b.status === 'confirmed').map((b) => planLines.get(b.planLineId)!);
  const out: Suggestion[] = [];

  for (const b of booked.filter((x) => x.status === 'rejected')) {
    const line = planLines.get(b.planLineId)!;
    if (line.budgetMinor === 0 || confirmed.length === 0 || confirmed.some((c) => c.budgetMinor === 0)) continue;
    const shares = prorate(
      line.budgetMinor,
      confirmed.map((c) => c.budgetMinor),
    );
    const budgets = new Map<string, number | null>([[line.id, null]]);
    confirmed.forEach((c, k) => budgets.set(c.id, c.budgetMinor + shares[k]!));
    out.push({
      kind: 'reallocate-rejected-budget',
      subject: line.id,
      reason: `The supplier rejected the ${line.channel} line (${line.adapterKey}); its ${line.budgetMinor} GBP minor units can go to the ${confirmed.length} confirmed line(s), in proportion to their budgets.`,
      figures: {
        rejectedLine: { planLineId: line.id, bookingLineId: b.bookingLineId, channel: line.channel, budgetMinor: line.budgetMinor },
        confirmedLines: confirmed.map((c, k) => ({
          planLineId: c.id,
          channel: c.channel,
          budgetMinor: c.budgetMinor,
          addedMinor: shares[k],
        })),
        movedMinor: line.budgetMinor,
      },
      change: amendment(i.plan, budgets),
    });
  }

  if (i.plan.lines.length > 1) {
    for (const b of booked.filter((x) => x.status === 'confirmed' && x.confirmedAt)) {
      const since = b.confirmedAt!;
      const days = Math.floor((i.now.getTime() - since.getTime()) / DAY_MS);
      if (days < i.idleDays) continue;
      const sinceDay = since.toISOString().slice(0, 10);
      const outcomeSince = i.lastOutcomeDate !== null && i.lastOutcomeDate >= sinceDay;
      const pixelSince = i.lastPixelEventAt !== null && i.lastPixelEventAt >= since;
      if (outcomeSince || pixelSince) continue;
      const line = planLines.get(b.planLineId)!;
      out.push({
        kind: 'remove-idle-line',
        subject: line.id,
        reason: `The ${line.channel} line (${line.adapterKey}) was confirmed ${days} days ago and the campaign has recorded no outcomes and no pixel events since; stop spending on it.`,
        figures: {
          line: { planLineId: line.id, bookingLineId: b.bookingLineId, channel: line.channel, budgetMinor: line.budgetMinor },
          confirmedAt: since.toISOString(),
          daysSinceConfirmed: days,
          idleDaysThreshold: i.idleDays,
          lastOutcomeDate: i.lastOutcomeDate,
          lastPixelEventAt: i.lastPixelEventAt?.toISOString() ?? null,
          savedMinor: line.budgetMinor,
        },
        change: amendment(i.plan, new Map([[line.id, null]])),
      });
    }
  }
  return out;
}

/** The facts the rules read, for one campaign. */
export async function suggestionFacts(db: Knex, advertiserId: string, campaignId: string) {
  const booking = await db('bookings')
    .where({ campaign_id: campaignId })
    .orderBy([
      { column: 'submitted_at', order: 'desc' },
      { column: 'id', order: 'desc' },
    ])
    .first('id');
  const lines = booking
    ? await db('booking_lines').where({ booking_id: booking.id }).select('id', 'plan_line_id', 'status', 'confirmed_at')
    : [];
  const outcome = await db.raw(
    `select to_char(max(date), 'YYYY-MM-DD') as last from campaign_outcomes where campaign_id = ? and value > 0`,
    [campaignId],
  );
  const pixel = await db('pixel_events').where({ advertiser_id: advertiserId }).max<{ last: Date | null }>('received_at as last').first();
  return {
    booked: lines.map((l) => ({
      planLineId: l.plan_line_id as string,
      bookingLineId: l.id as string,
      status: l.status as string,
      confirmedAt: (l.confirmed_at as Date | null) ?? null,
    })),
    lastOutcomeDate: (outcome.rows[0]?.last as string | null) ?? null,
    lastPixelEventAt: pixel?.last ?? null,
  };
}
