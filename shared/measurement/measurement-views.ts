import { z } from 'zod';
import { DateTimeSchema, FreeFormSchema, Sha256HexSchema } from '../wire';
import { MarketSchema } from '../config/measurement-settings';

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

const PeriodSchema = z.object({ from: z.string(), to: z.string(), weeks: z.number().int().min(0) });

/** A geo-lift design as registered: the request with its defaults, the controls it fixed and its check. */
export const GeoLiftDesignSchema = z
  .object({
    id: z.uuid(),
    campaignId: z.uuid(),
    status: z.enum(['registered', 'underpowered']).describe('An underpowered design is kept as refused and is never evaluated.'),
    testMarket: z.string(),
    controlMarkets: z.array(z.string()),
    controlMarketsNamed: z.boolean().describe('Whether the registration named the controls (else every market with complete data).'),
    metric: z.string(),
    exposureStart: z.string(),
    exposureEnd: z.string(),
    fitWeeks: z.number().int(),
    expectedLiftPct: z.number(),
    alpha: z.number(),
    power: z.number(),
    alternative: z.enum(['two-sided', 'greater']),
    check: z.object({
      designPeriod: PeriodSchema,
      fitPeriod: PeriodSchema,
      exposurePeriod: PeriodSchema,
      minimumDetectableLiftPct: z.number(),
      exposureWeeksNeeded: z.number().int().nullable(),
      fitWeeksNeeded: z.number().int().nullable(),
      diagnostics: z.object({
        correlation: z.number(),
        durbinWatson: z.number(),
        residualAutocorrelation: z.number(),
        modelledAutocorrelation: z.number(),
        relativeNoise: z.number(),
        aaTest: z.object({ fitWeeks: z.number().int(), placeboWeeks: z.number().int(), placeboLiftPct: z.number(), pValue: z.number() }),
      }),
    }),
    refusal: z.object({ code: z.string(), reason: z.string(), detail: z.string() }).nullable(),
    registeredBy: z.string().min(1),
    agentClientId: z.string().nullable(),
    createdAt: DateTimeSchema,
  })
  .meta({ id: 'GeoLiftDesign' });

/** A geo-lift estimate kept as evidence: the fit, estimate and design figures are not all modeled. */
export const LiftEvidenceSchema = z
  .looseObject({
    id: z.string().min(1),
    campaignId: z.uuid(),
    designId: z.uuid().nullable().describe('The registered design evaluated (null for evaluations made before designs were registered).'),
    look: z.enum(['interim', 'final']).nullable().describe('An interim look makes no claim; the final look is made once.'),
    method: z.string().min(1),
    estimate: FreeFormSchema,
    design: FreeFormSchema,
    createdBy: z.string().min(1),
    createdAt: DateTimeSchema,
  })
  .meta({ id: 'LiftEvidence' });
