import { z } from 'zod';
import { PlanSchema } from '../campaigns/campaign-schemas';
import { DateTimeSchema, FreeFormSchema } from '../wire';

/** A suggestion; its figures and the plan amendment it proposes are kind-specific and not modeled. */
export const OptimizationSchema = z
  .object({
    id: z.string().min(1),
    campaignId: z.uuid(),
    kind: z.string().min(1),
    status: z.string().min(1),
    reason: z.string(),
    figures: FreeFormSchema,
    change: FreeFormSchema,
    basisPlanVersion: z.number().int(),
    decidedBy: z.string().nullable(),
    decidedAt: DateTimeSchema.nullable(),
    createdAt: DateTimeSchema,
  })
  .meta({ id: 'Optimization' });

export const OptimizationEnvelope = z.object({ optimization: OptimizationSchema }).meta({ id: 'OptimizationEnvelope' });
export const AcceptedOptimizationEnvelope = z
  .object({ optimization: OptimizationSchema, plan: PlanSchema })
  .meta({ id: 'AcceptedOptimization' });
