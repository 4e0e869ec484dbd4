import { z } from 'zod';
import { DateTimeSchema, FreeFormSchema, Sha256HexSchema } from '../wire';
import { MarketSchema } from './measurement-config';

/** Response shapes of outcome imports and geo-lift evidence. */
export const MarketsEnvelope = z.object({ markets: z.array(MarketSchema) }).meta({ id: 'MeasurementMarkets' });

export const OutcomeBatchSchema = z
  .object({
    id: z.string().min(1),
    campaignId: z.uuid(),
    format: z.enum(['json', 'csv']),
    rowCount: z.number().int().min(0),
    insertedCount: z.number().int().min(0),
    replacedCount: z.number().int().min(0),
    contentSha256: Sha256HexSchema,
    importedBy: z.string().min(1),
    agentClientId: z.string().nullable(),
    createdAt: DateTimeSchema,
  })
  .meta({ id: 'OutcomeBatch' });

export const OutcomesEnvelope = z
  .object({
    batches: z.array(OutcomeBatchSchema),
    stored: z.array(z.object({ metric: z.string(), rows: z.number().int(), from: z.string(), to: z.string(), total: z.number() })),
  })
  .meta({ id: 'CampaignOutcomes' });

/** A geo-lift estimate kept as evidence: the fit, estimate and design figures are not all modeled. */
export const LiftEvidenceSchema = z
  .looseObject({
    id: z.string().min(1),
    campaignId: z.uuid(),
    method: z.string().min(1),
    estimate: FreeFormSchema,
    design: FreeFormSchema,
    createdBy: z.string().min(1),
    createdAt: DateTimeSchema,
  })
  .meta({ id: 'LiftEvidence' });
