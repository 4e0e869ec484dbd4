import { z } from 'zod';
import defaultMarkets from './default-markets.json';

export const MarketSchema = z.strictObject({
  id: z
    .string()
    .regex(/^[a-z0-9][a-z0-9-]{0,63}$/)
    .describe('a lower-case market id, e.g. london'),
  name: z.string().min(1).max(200),
});
export type Market = z.infer<typeof MarketSchema>;

const MarketListSchema = z
  .array(MarketSchema)
  .min(2)
  .max(500)
  .refine((ms) => new Set(ms.map((m) => m.id)).size === ms.length, 'market ids must be unique');

const jsonText = z.string().transform((v, ctx) => {
  try {
    return JSON.parse(v) as unknown;
  } catch {
    ctx.addIssue({ code: 'custom', message: 'must be JSON' });
    return z.NEVER;
  }
});

/** The artifact purposes a brand lift study needs before its research can run. */
export const ARTIFACT_PURPOSES = [
  'supplier-quote',
  'contract',
  'account-entitlement',
  'tracking-installation',
  'supplier-tracking-acceptance',
  'privacy-notice',
  'consent',
  'processing-terms',
  'foreign-currency-coverage',
  'settlement',
  'reconciliation',
] as const;
export const ArtifactPurposeSchema = z.enum(ARTIFACT_PURPOSES);

/** Measurement settings, part of the one config schema (shared/config.ts). */
export const measurementConfig = {
  /** Geo markets that outcomes and geo-lift designs name, as JSON [{"id","name"}]; default: UK ITV regions. */
  GEO_MARKETS: jsonText.pipe(MarketListSchema).default(defaultMarkets as Market[]),
  /** The outcome metric a geo-lift evaluation measures. */
  PROVE_IT_METRIC: z.string().min(1).max(64).default('conversions'),
  /** The significance level a geo-lift design registers when it names none. */
  PROVE_IT_ALPHA: z.coerce.number().gt(0).max(0.2).default(0.05),
  /** Whole weeks right before exposure that a design fits on when it names none. */
  PROVE_IT_FIT_WEEKS: z.coerce.number().int().min(4).max(52).default(8),
  /** Whole weeks before the fit window that the power gate and the model checks need. */
  PROVE_IT_MIN_DESIGN_WEEKS: z.coerce.number().int().min(4).max(26).default(6),
  PROVE_IT_MIN_CONTROL_MARKETS: z.coerce.number().int().min(1).max(100).default(2),
  /** The least daily correlation between the test market and the controls' total a design may have. */
  PROVE_IT_MIN_CORRELATION: z.coerce.number().min(0).lt(1).default(0.5),
  /** A confirmed line with no outcomes and no pixel events for this many days is suggested for removal. */
  OPTIMIZATION_IDLE_DAYS: z.coerce.number().int().min(1).max(365).default(14),
  /** Where brand lift study artifacts are stored, content-addressed; default `$DATA_DIR/artifacts`. */
  ARTIFACT_DIR: z.string().min(1).optional(),
  /** The furthest `retainUntil` an artifact may ask for. */
  ARTIFACT_RETENTION_MAX_DAYS: z.coerce.number().int().min(1).max(36_500).default(2557),
  /** Comma-separated purposes a study must have artifacts for. */
  STUDY_REQUIRED_ARTIFACTS: z
    .string()
    .default('supplier-quote,contract,privacy-notice,consent,processing-terms')
    .transform((v) =>
      v
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean),
    )
    .pipe(z.array(ArtifactPurposeSchema)),
};
