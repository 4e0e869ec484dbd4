import { z } from 'zod';
import { DateTimeSchema } from '../wire';
import { ChannelSchema } from '../auth/products';

const MinorUnits = z.number().int().min(0).max(Number.MAX_SAFE_INTEGER);
const IsoDate = z.iso.date();
/** A daily spend cap: the most a campaign or line may spend on one UTC day (docs/delivery.md, Daily caps). */
export const DailyCapSchema = z.number().int().min(1).max(Number.MAX_SAFE_INTEGER);

export const ExecutionModeSchema = z.enum(['sandbox', 'live']);

export const CreateCampaignSchema = z
  .strictObject({
    name: z.string().trim().min(1).max(200),
    clientName: z.string().trim().min(1).max(200),
    startDate: IsoDate,
    endDate: IsoDate,
    budgetMinor: MinorUnits,
    maximumCommitmentMinor: MinorUnits,
    channels: z.array(ChannelSchema).min(1).max(7),
    executionMode: ExecutionModeSchema.optional(),
    dailyCapMinor: DailyCapSchema.optional(),
  })
  .refine((c) => c.endDate >= c.startDate, { path: ['endDate'], message: 'endDate must not be before startDate' })
  .refine((c) => c.maximumCommitmentMinor >= c.budgetMinor, {
    path: ['maximumCommitmentMinor'],
    message: 'maximumCommitmentMinor must cover budgetMinor',
  })
  .refine((c) => new Set(c.channels).size === c.channels.length, { path: ['channels'], message: 'channels must not repeat' })
  .meta({ id: 'CreateCampaign' });
export type CreateCampaign = z.infer<typeof CreateCampaignSchema>;

export const CampaignSchema = z
  .object({
    id: z.uuid(),
    advertiserId: z.string(),
    name: z.string(),
    clientName: z.string(),
    startDate: z.string(),
    endDate: z.string(),
    budgetMinor: z.number().int(),
    maximumCommitmentMinor: z.number().int(),
    currency: z.literal('GBP'),
    channels: z.array(ChannelSchema),
    executionMode: ExecutionModeSchema,
    /** The most the campaign's lines together may spend on one UTC day; null for none. */
    dailyCapMinor: z.number().int().nullable(),
    status: z.string(),
    version: z.number().int(),
    createdAt: DateTimeSchema,
    updatedAt: DateTimeSchema,
  })
  .meta({ id: 'Campaign' });
export type Campaign = z.infer<typeof CampaignSchema>;

/** An AdCP seller's product and pricing option (from GET /api/v1/adapters/{key}/products). */
export const SupplierProductSchema = z
  .strictObject({
    productId: z.string().min(1).max(200),
    pricingOptionId: z.string().min(1).max(200),
  })
  .meta({ id: 'SupplierProduct' });

export const PlanLineInputSchema = z.strictObject({
  channel: ChannelSchema,
  adapterKey: z.string().min(1).max(100),
  budgetMinor: MinorUnits,
  creativeIds: z.array(z.string().min(1).max(128)).max(20).default([]),
  /** Required on an AdCP seller's line, refused on any other. */
  supplierProduct: SupplierProductSchema.optional(),
  /** The most the line may spend on one UTC day. */
  dailyCapMinor: DailyCapSchema.optional(),
});

export const ReplacePlanSchema = z
  .strictObject({
    lines: z.array(PlanLineInputSchema).min(1).max(50),
    /** The plan version being replaced; omitted only when creating the first plan. */
    expectedVersion: z.number().int().min(0).optional(),
  })
  .meta({ id: 'ReplacePlan' });
export type ReplacePlan = z.infer<typeof ReplacePlanSchema>;

export const ApprovePlanSchema = z
  .strictObject({
    expectedVersion: z.number().int().min(1),
  })
  .meta({ id: 'ApprovePlan' });

export const PlanLineSchema = z.object({
  id: z.uuid(),
  channel: ChannelSchema,
  adapterKey: z.string(),
  budgetMinor: z.number().int(),
  creativeIds: z.array(z.string()),
  supplierProduct: SupplierProductSchema.optional(),
  dailyCapMinor: z.number().int().optional(),
});
export type PlanLine = z.infer<typeof PlanLineSchema>;

export const PlanApprovalSchema = z
  .object({
    userId: z.string(),
    approvedAt: DateTimeSchema,
    /** The snapshot digest this person approved. */
    digest: z.string(),
  })
  .meta({ id: 'PlanApproval' });
export type PlanApproval = z.infer<typeof PlanApprovalSchema>;

export const PlanSchema = z
  .object({
    id: z.uuid(),
    campaignId: z.uuid(),
    version: z.number().int(),
    status: z.enum(['draft', 'approved']),
    lines: z.array(PlanLineSchema),
    totalBudgetMinor: z.number().int(),
    approvedDigest: z.string().nullable(),
    approvedAt: DateTimeSchema.nullable(),
    approvedBy: z.string().nullable(),
    /** Whether the campaign and plan still match what was approved. */
    approvalCurrent: z.boolean(),
    /** Who approved this version so far (a plan above the workspace's second-approval amount needs two people). */
    approvals: z.array(PlanApprovalSchema),
    /** How many different people must approve it: 1, or 2 above the workspace's second-approval amount. */
    approvalsRequired: z.number().int(),
    createdAt: DateTimeSchema,
    updatedAt: DateTimeSchema,
  })
  .meta({ id: 'Plan' });
export type Plan = z.infer<typeof PlanSchema>;

export const PlanEnvelope = z.object({ plan: PlanSchema }).meta({ id: 'PlanEnvelope' });
