import { z } from 'zod';
import { OUTLOOK_CLASSES } from '../delivery/outlook';
import { DateTimeSchema } from '../wire';

const Day = z.string().regex(/^\d{4}-\d{2}-\d{2}$/, 'a date, YYYY-MM-DD');
const Minor = z.number().int().min(0).max(1_900_000_000);

/**
 * What a rule measures, on a line or on the campaign's lines together, from the delivery of the
 * days over (docs/agent.md, Rules):
 * - `projected-under-delivery-percent`: how far the outlook's projected spend falls short of the budget;
 * - `pacing-percent`: delivered spend over what an even pace would have spent by now;
 * - `cpm-minor`: cost per thousand impressions delivered so far;
 * - `delivered-spend-minor`: spend delivered so far;
 * - `cost-per-outcome-minor` (campaign only): delivered spend per imported outcome of one metric.
 */
export const RULE_METRICS = ['projected-under-delivery-percent', 'pacing-percent', 'cpm-minor', 'delivered-spend-minor'] as const;
export type RuleMetric = (typeof RULE_METRICS)[number];

const conditionBase = {
  subject: z.enum(['line', 'campaign']).describe('Each line of the campaign, or its lines together.'),
  /** On this many evaluation days in a row (the latest one included) before it fires. */
  forDays: z.number().int().min(1).max(14).default(1),
};

export const RuleConditionSchema = z
  .union([
    z.strictObject({
      ...conditionBase,
      metric: z.enum(RULE_METRICS),
      operator: z.enum(['above', 'below']),
      value: z.number().min(0).max(1_000_000_000),
    }),
    z.strictObject({
      ...conditionBase,
      metric: z.literal('classification'),
      is: z.enum(OUTLOOK_CLASSES),
    }),
    z.strictObject({
      ...conditionBase,
      /** The campaign's delivered spend over the imported outcomes of `outcome` so far (all markets): outcomes are the campaign's, so its subject is the campaign. */
      subject: z.literal('campaign'),
      metric: z.literal('cost-per-outcome-minor'),
      outcome: z.string().trim().min(1).max(64),
      operator: z.enum(['above', 'below']),
      value: z.number().min(0).max(1_000_000_000),
    }),
  ])
  .meta({ id: 'RuleCondition' });
export type RuleCondition = z.infer<typeof RuleConditionSchema>;

export const RuleActionSchema = z
  .union([
    z.strictObject({ kind: z.literal('notify') }),
    z.strictObject({ kind: z.literal('pause-line') }),
    z.strictObject({ kind: z.literal('resume-line') }),
    z.strictObject({
      kind: z.literal('move-budget'),
      /** The most one firing moves, from the line the condition holds for. */
      amountMinor: Minor.min(1),
      /** The line that receives it; absent: the campaign's running on-track line projected to spend the largest share of its budget. */
      toLineId: z.uuid().optional(),
    }),
  ])
  .meta({ id: 'RuleAction' });
export type RuleAction = z.infer<typeof RuleActionSchema>;

export const RuleGuardrailsSchema = z
  .strictObject({
    maxMovedPerDayMinor: Minor,
    maxMovedPerFlightMinor: Minor,
    /** No move leaves the giving line's budget below this. */
    minLineBudgetMinor: Minor,
    /** Evaluation days after a firing before the same subject fires again. */
    cooldownDays: z.number().int().min(0).max(90),
    /** When the rule may act: between these days, on these weekdays (0 Monday … 6 Sunday). */
    window: z
      .strictObject({
        from: Day.optional(),
        until: Day.optional(),
        weekdays: z.array(z.number().int().min(0).max(6)).min(1).max(7).optional(),
      })
      .refine((w) => !w.from || !w.until || w.from <= w.until, { message: 'from is after until', path: ['until'] })
      .optional(),
  })
  .refine((g) => g.maxMovedPerDayMinor <= g.maxMovedPerFlightMinor, {
    message: 'a day cannot move more than the flight',
    path: ['maxMovedPerDayMinor'],
  })
  .meta({ id: 'RuleGuardrails' });
export type RuleGuardrails = z.infer<typeof RuleGuardrailsSchema>;

/** A line action needs a line to act on. */
const lineActionNeedsLineSubject = (r: { condition?: RuleCondition; action?: RuleAction }) =>
  !r.condition || !r.action || r.action.kind === 'notify' || r.condition.subject === 'line';
const LINE_SUBJECT = { message: 'pause, resume and budget moves act on a line: use subject line', path: ['action'] };

export const CreateRuleSchema = z
  .strictObject({
    name: z.string().trim().min(1).max(200),
    campaignId: z.uuid(),
    condition: RuleConditionSchema,
    action: RuleActionSchema,
    guardrails: RuleGuardrailsSchema,
  })
  .refine(lineActionNeedsLineSubject, LINE_SUBJECT)
  .meta({ id: 'CreateRule' });
export type CreateRule = z.infer<typeof CreateRuleSchema>;

export const RuleModeSchema = z.enum(['notify-only', 'active']);

export const UpdateRuleSchema = z
  .strictObject({
    expectedVersion: z.number().int().min(1),
    name: z.string().trim().min(1).max(200).optional(),
    condition: RuleConditionSchema.optional(),
    action: RuleActionSchema.optional(),
    guardrails: RuleGuardrailsSchema.optional(),
    /** `active` is a person's decision: it grants the rule's agent its mandate (below), after a dry run of this version. */
    mode: RuleModeSchema.optional(),
    /** The most one automatic action may commit; beyond it the rule asks a person. Required to make a rule active. */
    mandate: z.strictObject({ budgetCeilingMinor: Minor }).optional(),
  })
  .refine((b) => Object.keys(b).some((k) => k !== 'expectedVersion'), { message: 'change at least one field', path: [] })
  .refine((b) => b.mode !== 'active' || b.mandate !== undefined, { message: 'making a rule active needs its mandate', path: ['mandate'] })
  .refine((b) => b.mandate === undefined || b.mode === 'active', { message: 'a mandate comes with mode active', path: ['mandate'] })
  .meta({ id: 'UpdateRule' });
export type UpdateRule = z.infer<typeof UpdateRuleSchema>;

export const RulePlannedSchema = z.object({
  action: z.enum(['notify', 'pause-line', 'resume-line', 'move-budget']),
  lineId: z.uuid().nullable(),
  toLineId: z.uuid().nullable(),
  amountMinor: z.number().int().nullable(),
  /** The measured value that met the condition (the latest day's), and the day its figures run to. */
  observed: z.union([z.number(), z.string()]).nullable(),
  through: z.string(),
});
export type RulePlanned = z.infer<typeof RulePlannedSchema>;

export const RULE_OUTCOMES = ['notified', 'executing', 'executed', 'awaiting-approval', 'held', 'failed'] as const;
export type RuleOutcome = (typeof RULE_OUTCOMES)[number];

export const RuleFiringSchema = z
  .object({
    id: z.uuid(),
    ruleId: z.uuid(),
    ruleVersion: z.number().int(),
    evaluationDay: z.string(),
    subjectId: z.uuid(),
    mode: RuleModeSchema,
    /**
     * `notified` (notify-only, or a notify action), `executed` (a governed action approved by the
     * rule's mandate and run), `awaiting-approval` (outside the mandate: a person decides),
     * `held` (a guardrail stopped it), `failed` (the action was refused), `executing` (in hand).
     */
    outcome: z.enum(RULE_OUTCOMES),
    planned: RulePlannedSchema,
    movedMinor: z.number().int(),
    approvalId: z.uuid().nullable(),
    stepId: z.uuid().nullable(),
    detail: z.string().nullable(),
    createdAt: DateTimeSchema,
  })
  .meta({ id: 'RuleFiring' });
export type RuleFiring = z.infer<typeof RuleFiringSchema>;

export const DryRunFiringSchema = z.object({
  day: z.string(),
  subjectId: z.uuid(),
  outcome: z.enum(['would-act', 'would-notify', 'would-ask', 'held']),
  planned: RulePlannedSchema,
  detail: z.string().nullable(),
});

export const RuleDryRunSchema = z
  .object({
    id: z.uuid(),
    ruleId: z.uuid(),
    ruleVersion: z.number().int(),
    fromDay: z.string(),
    throughDay: z.string(),
    /** What it would have moved in all, as if it had been active. */
    movedMinor: z.number().int(),
    firings: z.array(DryRunFiringSchema),
    requestedBy: z.string(),
    createdAt: DateTimeSchema,
  })
  .meta({ id: 'RuleDryRun' });
export type RuleDryRun = z.infer<typeof RuleDryRunSchema>;

export const RuleSchema = z
  .object({
    id: z.uuid(),
    campaignId: z.uuid(),
    name: z.string(),
    condition: RuleConditionSchema,
    action: RuleActionSchema,
    guardrails: RuleGuardrailsSchema,
    mode: RuleModeSchema,
    version: z.number().int(),
    /** The agent client id the rule acts as: its mandate is `GET /api/v1/agent/mandates`' row of that id. */
    agentClientId: z.string(),
    mandate: z.object({ allowedActions: z.array(z.string()), budgetCeilingMinor: z.number().int(), currency: z.string() }).nullable(),
    enabledBy: z.string().nullable(),
    enabledAt: DateTimeSchema.nullable(),
    createdBy: z.string(),
    createdAt: DateTimeSchema,
    updatedAt: DateTimeSchema,
    lastFiring: RuleFiringSchema.nullable(),
    lastDryRun: RuleDryRunSchema.omit({ firings: true }).nullable(),
  })
  .meta({ id: 'Rule' });
export type Rule = z.infer<typeof RuleSchema>;
