import { addDays } from '../../shared/dates';
import { conditionHolds, coolingDown, inWindow, planAction, type RuleCampaign, type RuleLine } from '../../shared/rules/rule-condition';
import type { RuleGuardrails } from '../../shared/rules/rule-schemas';

const START = '2030-01-07'; // a Monday
const line = (lineId: string, budgetMinor: number, perDay: number[], extra: Partial<RuleLine> = {}): RuleLine => ({
  lineId,
  bookingId: '00000000-0000-4000-8000-000000000000',
  budgetMinor,
  version: 1,
  running: true,
  paused: false,
  idle: false,
  dailyCapMinor: null,
  days: perDay.map((spendMinor, k) => ({ date: addDays(START, k), spendMinor, impressions: spendMinor * 10 })),
  ...extra,
});
const A = '00000000-0000-4000-8000-00000000000a';
const B = '00000000-0000-4000-8000-00000000000b';
/** A 30-day flight: A spends half its even pace for the first ten days, B its even pace. */
const campaign = (aDays = 10): RuleCampaign => ({
  campaignId: '00000000-0000-4000-8000-0000000000cc',
  startDate: START,
  endDate: addDays(START, 29),
  lines: [line(A, 300_000, Array(aDays).fill(5_000)), line(B, 300_000, Array(10).fill(10_000))],
});
const under = { subject: 'line' as const, metric: 'projected-under-delivery-percent' as const, operator: 'above' as const, value: 15 };
const guardrails: RuleGuardrails = { maxMovedPerDayMinor: 10_000, maxMovedPerFlightMinor: 25_000, minLineBudgetMinor: 0, cooldownDays: 2 };

describe('a rule’s condition', () => {
  test('holds only when it held on each of the last forDays evaluations, each reading the days over before it', () => {
    const c = campaign();
    const [a, b] = c.lines as [RuleLine, RuleLine];
    // Day 10 reads days 0–9: A projects about half its budget, 50% short; B is on track.
    const seen = conditionHolds({ ...under, forDays: 2 }, c, a, addDays(START, 10), 0.15);
    expect(seen.holds).toBe(true);
    expect(seen.through).toBe(addDays(START, 9));
    expect(seen.observed as number).toBeGreaterThan(40);
    expect(conditionHolds({ ...under, forDays: 2 }, c, b, addDays(START, 10), 0.15).holds).toBe(false);
    // With three days over it is measured on its rate; with two it is the plan, and "two days in a row" needs both.
    expect(conditionHolds({ ...under, forDays: 1 }, c, a, addDays(START, 4), 0.15).holds).toBe(true);
    expect(conditionHolds({ ...under, forDays: 2 }, c, a, addDays(START, 3), 0.15).holds).toBe(false);
    // Before the flight's first day is over, nothing holds.
    expect(conditionHolds({ ...under, forDays: 1 }, c, a, START, 0.15).holds).toBe(false);
    // The campaign's lines together: 25% short, above 15, below 30.
    expect(conditionHolds({ ...under, subject: 'campaign', forDays: 1 }, c, null, addDays(START, 10), 0.15).holds).toBe(true);
    expect(conditionHolds({ ...under, subject: 'campaign', value: 30, forDays: 1 }, c, null, addDays(START, 10), 0.15).holds).toBe(false);
    expect(
      conditionHolds({ subject: 'line', metric: 'cpm-minor', operator: 'below', value: 101, forDays: 1 }, c, a, addDays(START, 10), 0.15),
    ).toMatchObject({ holds: true, observed: 100 });
    expect(
      conditionHolds({ subject: 'line', metric: 'classification', is: 'under-delivery', forDays: 3 }, c, a, addDays(START, 10), 0.15).holds,
    ).toBe(true);
    // Cost per imported outcome, the campaign's: 150,000 spent over ten days, 300 sign-ups by then (more after do not count yet).
    const withOutcomes: RuleCampaign = {
      ...c,
      outcomes: new Map([
        [
          'signups',
          [...Array(10).keys()].map((k) => ({ date: addDays(START, k), value: 30 })).concat([{ date: addDays(START, 10), value: 999 }]),
        ],
      ]),
    };
    const cpa = {
      subject: 'campaign' as const,
      metric: 'cost-per-outcome-minor' as const,
      outcome: 'signups',
      operator: 'above' as const,
      forDays: 1,
    };
    expect(conditionHolds({ ...cpa, value: 499 }, withOutcomes, null, addDays(START, 10), 0.15)).toMatchObject({
      holds: true,
      observed: 500,
    });
    expect(conditionHolds({ ...cpa, value: 500 }, withOutcomes, null, addDays(START, 10), 0.15).holds).toBe(false);
    // No outcome of that metric yet: nothing to measure, nothing holds.
    expect(conditionHolds({ ...cpa, outcome: 'sales', value: 0 }, withOutcomes, null, addDays(START, 10), 0.15).holds).toBe(false);
  });
});

describe('a rule’s guardrails', () => {
  test('the window, the cooldown, and every money limit cut or hold a move', () => {
    expect(inWindow({ ...guardrails, window: { weekdays: [0] } }, START)).toBe(true);
    expect(inWindow({ ...guardrails, window: { weekdays: [1, 2, 3, 4, 5, 6] } }, START)).toBe(false);
    expect(inWindow({ ...guardrails, window: { from: addDays(START, 1) } }, START)).toBe(false);
    expect(inWindow({ ...guardrails, window: { until: addDays(START, -1) } }, START)).toBe(false);
    expect(coolingDown(guardrails, START, addDays(START, 2))).toBe(true);
    expect(coolingDown(guardrails, START, addDays(START, 3))).toBe(false);
    expect(coolingDown(guardrails, null, START)).toBe(false);

    const c = campaign();
    const a = c.lines[0]!;
    const seen = { observed: 50, through: addDays(START, 9) };
    const rule = (g: Partial<RuleGuardrails>, amountMinor = 8_000) => ({
      condition: { ...under, forDays: 1 },
      action: { kind: 'move-budget' as const, amountMinor },
      guardrails: { ...guardrails, ...g },
    });
    const plan = (g: Partial<RuleGuardrails>, usage = { movedToday: 0, movedInFlight: 0 }, amount?: number) =>
      planAction(rule(g, amount), c, a, seen, usage, 0.15);
    // To the on-track line, the amount asked.
    expect(plan({})).toEqual({
      planned: expect.objectContaining({ action: 'move-budget', lineId: A, toLineId: B, amountMinor: 8_000 }),
      held: null,
    });
    // Cut to the day's headroom, then the flight's; held when none is left.
    expect(plan({}, { movedToday: 7_000, movedInFlight: 7_000 })!.planned.amountMinor).toBe(3_000);
    expect(plan({}, { movedToday: 0, movedInFlight: 20_000 })!.planned.amountMinor).toBe(5_000);
    expect(plan({}, { movedToday: 10_000, movedInFlight: 10_000 })).toMatchObject({ held: "the day's most budget moved is reached" });
    // Never below the line's minimum budget, nor below what it has spent (50,000 so far).
    expect(plan({ minLineBudgetMinor: 295_000 })!.planned.amountMinor).toBe(5_000);
    expect(plan({ minLineBudgetMinor: 0 }, undefined, 260_000)!.planned.amountMinor).toBe(10_000);
    expect(
      planAction(
        rule({ minLineBudgetMinor: 0, maxMovedPerDayMinor: 300_000, maxMovedPerFlightMinor: 300_000 }, 260_000),
        c,
        a,
        seen,
        { movedToday: 0, movedInFlight: 0 },
        0.15,
      )!.planned.amountMinor,
    ).toBe(250_000);
    expect(plan({ minLineBudgetMinor: 300_000 })).toMatchObject({ held: expect.stringMatching(/minimum budget/) });
    // A line that is not running is neither paused nor moved; one that is not paused is not resumed.
    const stopped = { ...a, running: false };
    expect(
      planAction({ ...rule({}), action: { kind: 'pause-line' } }, c, stopped, seen, { movedToday: 0, movedInFlight: 0 }, 0.15),
    ).toBeNull();
    expect(planAction({ ...rule({}), action: { kind: 'resume-line' } }, c, a, seen, { movedToday: 0, movedInFlight: 0 }, 0.15)).toBeNull();
    expect(planAction(rule({}), c, stopped, seen, { movedToday: 0, movedInFlight: 0 }, 0.15)).toBeNull();
  });
});
