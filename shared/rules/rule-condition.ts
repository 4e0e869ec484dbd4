import { addDays, daysFrom } from '../dates';
import { campaignOutlookOf, outlookOf, type Outlook, type OutlookDay } from '../delivery/outlook';
import { pacingOf } from '../delivery/pacing';
import type { RuleAction, RuleCondition, RuleGuardrails, RulePlanned } from './rule-schemas';

/** A line as a rule sees it: its budget, whether it can take a pause or a resume now, and its reported days. */
export interface RuleLine {
  lineId: string;
  bookingId: string;
  budgetMinor: number;
  version: number;
  /** Confirmed with nothing in hand: it can be paused, or given or lose budget. */
  running: boolean;
  /** Paused (by a person, a rule or its cap) with nothing in hand: it can be resumed. */
  paused: boolean;
  /** Paused or ended: the outlook expects no more spend. */
  idle: boolean;
  dailyCapMinor: number | null;
  days: readonly OutlookDay[];
}

export interface RuleCampaign {
  campaignId: string;
  startDate: string;
  endDate: string;
  lines: RuleLine[];
  /** Imported outcomes by metric (all markets summed), by day: what `cost-per-outcome-minor` reads. */
  outcomes?: ReadonlyMap<string, ReadonlyArray<{ date: string; value: number }>>;
}

export interface RuleDefinition {
  condition: RuleCondition;
  action: RuleAction;
  guardrails: RuleGuardrails;
}

const deliveredThrough = (l: RuleLine, through: string) =>
  l.days.reduce((s, d) => (d.date <= through ? { spend: s.spend + d.spendMinor, impressions: s.impressions + d.impressions } : s), {
    spend: 0,
    impressions: 0,
  });

export function lineOutlook(c: RuleCampaign, l: RuleLine, through: string, tolerance: number): Outlook {
  return outlookOf(
    {
      budgetMinor: l.budgetMinor,
      startDate: c.startDate,
      endDate: c.endDate,
      through,
      days: l.days,
      idle: l.idle,
      dailyCapMinor: l.dailyCapMinor,
    },
    tolerance,
  );
}

const percent = (x: number) => Math.round(x * 10_000) / 100;

/** The condition's measure on the days up to `through`: for one line, or the campaign's lines together; null when there is none yet. */
export function measureAt(
  condition: RuleCondition,
  c: RuleCampaign,
  subject: RuleLine | null,
  through: string,
  tolerance: number,
): number | string | null {
  const lines = subject ? [subject] : c.lines;
  const budget = lines.reduce((s, l) => s + l.budgetMinor, 0);
  const delivered = lines.map((l) => deliveredThrough(l, through));
  const spend = delivered.reduce((s, d) => s + d.spend, 0);
  const impressions = delivered.reduce((s, d) => s + d.impressions, 0);
  switch (condition.metric) {
    case 'classification':
    case 'projected-under-delivery-percent': {
      const outlooks = lines.map((l) => ({ budgetMinor: l.budgetMinor, outlook: lineOutlook(c, l, through, tolerance) }));
      const o = subject ? outlooks[0]!.outlook : campaignOutlookOf(outlooks, tolerance);
      if (condition.metric === 'classification') return o.classification;
      return budget > 0 ? Math.max(0, percent((budget - o.spend.projectedMinor) / budget)) : null;
    }
    case 'pacing-percent': {
      const p = pacingOf(
        { budgetMinor: budget, startDate: c.startDate, endDate: c.endDate, deliveredMinor: spend, through, idle: false },
        tolerance,
      );
      return p.ratio === null ? null : percent(p.ratio);
    }
    case 'cpm-minor':
      return impressions > 0 ? Math.round((spend * 1000) / impressions) : null;
    case 'delivered-spend-minor':
      return spend;
    case 'cost-per-outcome-minor': {
      const outcomes = (c.outcomes?.get(condition.outcome) ?? []).reduce((s, o) => (o.date <= through ? s + o.value : s), 0);
      return outcomes > 0 ? Math.round(spend / outcomes) : null;
    }
  }
}

function meets(condition: RuleCondition, value: number | string | null): boolean {
  if (value === null) return false;
  if (condition.metric === 'classification') return value === condition.is;
  if (typeof value !== 'number') return false;
  return condition.operator === 'above' ? value > condition.value : value < condition.value;
}

/**
 * Whether the condition holds on the evaluation day: on the figures of each of the last
 * `forDays` days' evaluations (each reading the days over before it), all inside the flight.
 * Pure: the live cycle and the dry run read it alike.
 */
export function conditionHolds(
  condition: RuleCondition,
  c: RuleCampaign,
  subject: RuleLine | null,
  evaluationDay: string,
  tolerance: number,
): { holds: boolean; observed: number | string | null; through: string } {
  const through = addDays(evaluationDay, -1);
  let observed: number | string | null = null;
  for (let k = 0; k < condition.forDays; k++) {
    const t = addDays(through, -k);
    if (t < c.startDate || t > c.endDate) return { holds: false, observed, through };
    const value = measureAt(condition, c, subject, t, tolerance);
    if (k === 0) observed = value;
    if (!meets(condition, value)) return { holds: false, observed, through };
  }
  return { holds: true, observed, through };
}

/** Monday 0 … Sunday 6. */
const weekday = (d: string) => (Math.floor(Date.parse(`${d}T00:00:00Z`) / 86_400_000) + 3) % 7;

/** Whether the rule may act on this day at all (its time window). */
export function inWindow(g: RuleGuardrails, day: string): boolean {
  const w = g.window;
  if (!w) return true;
  if (w.from && day < w.from) return false;
  if (w.until && day > w.until) return false;
  return !w.weekdays || w.weekdays.includes(weekday(day));
}

/** After a firing, the same subject rests for `cooldownDays` evaluation days. */
export const coolingDown = (g: RuleGuardrails, lastFiredOn: string | null, day: string) =>
  lastFiredOn !== null && daysFrom(lastFiredOn, day) <= g.cooldownDays;

export interface MoveUsage {
  movedToday: number;
  movedInFlight: number;
}

export type Plan = { planned: RulePlanned; held: string | null } | null;

/**
 * What the rule does for a subject whose condition holds, within its guardrails: the planned
 * action, or `held` with the guardrail that stopped it; null when there is nothing to do (a
 * pause of a line that is not running, a resume of one that is not paused).
 */
export function planAction(
  rule: RuleDefinition,
  c: RuleCampaign,
  subject: RuleLine | null,
  seen: { observed: number | string | null; through: string },
  usage: MoveUsage,
  tolerance: number,
): Plan {
  const base = { lineId: subject?.lineId ?? null, toLineId: null, amountMinor: null, observed: seen.observed, through: seen.through };
  const a = rule.action;
  switch (a.kind) {
    case 'notify':
      return { planned: { ...base, action: 'notify' }, held: null };
    case 'pause-line':
      return subject?.running ? { planned: { ...base, action: 'pause-line' }, held: null } : null;
    case 'resume-line':
      return subject?.paused ? { planned: { ...base, action: 'resume-line' }, held: null } : null;
    case 'move-budget': {
      if (!subject) return null;
      const toId = a.toLineId?.toLowerCase();
      const to = toId ? c.lines.find((l) => l.lineId === toId) : receiver(c, subject, seen.through, tolerance);
      const planned = (amountMinor: number | null): RulePlanned => ({
        ...base,
        action: 'move-budget',
        toLineId: to?.lineId ?? null,
        amountMinor,
      });
      if (!subject.running) return null;
      if (!to || to.lineId === subject.lineId || !to.running)
        return { planned: planned(null), held: 'no running line of the campaign to receive the budget' };
      const g = rule.guardrails;
      const floor = Math.max(g.minLineBudgetMinor, deliveredThrough(subject, '9999-12-31').spend);
      const limits: Array<[number, string]> = [
        [a.amountMinor, ''],
        [subject.budgetMinor - floor, 'the giving line is at its minimum budget (or what it has spent)'],
        [g.maxMovedPerDayMinor - usage.movedToday, "the day's most budget moved is reached"],
        [g.maxMovedPerFlightMinor - usage.movedInFlight, "the flight's most budget moved is reached"],
      ];
      const [amount, why] = limits.reduce((m, l) => (l[0] < m[0] ? l : m));
      return amount > 0 ? { planned: planned(amount), held: null } : { planned: planned(null), held: why };
    }
  }
}

/** The running on-track line (other than the giver) projected to spend the largest share of its budget. */
function receiver(c: RuleCampaign, from: RuleLine, through: string, tolerance: number): RuleLine | undefined {
  return c.lines
    .filter((l) => l.lineId !== from.lineId && l.running && l.budgetMinor > 0)
    .map((l) => ({ l, o: lineOutlook(c, l, through, tolerance) }))
    .filter((x) => x.o.classification === 'on-track')
    .sort(
      (x, y) =>
        y.o.spend.projectedMinor / y.l.budgetMinor - x.o.spend.projectedMinor / x.l.budgetMinor || (x.l.lineId < y.l.lineId ? -1 : 1),
    )[0]?.l;
}
