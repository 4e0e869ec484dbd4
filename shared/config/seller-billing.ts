import { sellerOfAdapter } from './adcp-keys';
import { z } from 'zod';

/**
 * A seller's billing terms (docs/billing.md, Reconciliation): how long after a day its figures
 * may still change before they are final, and how far its invoice may differ from our final
 * figures before it is disputed. AdCP names the variance (`measurement_terms.billing_measurement
 * .max_variance_percent`); the finalization window is the deployment's agreement with the seller.
 */
export const SellerBillingSchema = z.strictObject({
  /** Hours after a day ends until its figures are final, unless the seller calls them final sooner. */
  finalizationHours: z
    .number()
    .int()
    .min(0)
    .max(24 * 90)
    .optional(),
  /** An invoice line whose amount differs from our final figure by more than this percent is disputed. */
  maxVariancePercent: z.number().min(0).lt(100).optional(),
});
export type SellerBilling = z.infer<typeof SellerBillingSchema>;

export interface BillingTermsOfSeller {
  finalizationHours: number;
  maxVariancePercent: number;
}

const TermsByAdapter = z
  .string()
  .default('{}')
  .transform((v, ctx) => {
    try {
      return JSON.parse(v) as unknown;
    } catch {
      ctx.addIssue({ code: 'custom', message: 'must be JSON' });
      return z.NEVER;
    }
  })
  .pipe(z.record(z.string().regex(/^[a-z][a-z0-9-]*$/, 'an adapter key'), SellerBillingSchema));

/** Configuration of sellers' billing terms; AdCP sellers may also carry theirs in ADCP_SELLERS (`billing`). */
export const sellerBillingConfig = {
  /** Hours after a day ends until its figures are final, for sellers that say nothing else. */
  SELLER_FINALIZATION_HOURS: z.coerce
    .number()
    .int()
    .min(0)
    .max(24 * 90)
    .default(72),
  /** Invoice variance tolerated, in percent, for sellers that say nothing else. */
  SELLER_MAX_VARIANCE_PERCENT: z.coerce.number().min(0).lt(100).default(10),
  /** Per adapter key, e.g. {"sandbox-ctv":{"finalizationHours":48,"maxVariancePercent":5}}. */
  SELLER_BILLING_TERMS: TermsByAdapter,
};

/** The terms a seller bills on: its own (ADCP_SELLERS, then SELLER_BILLING_TERMS), else the defaults. */
export function sellerBillingTerms(
  config: {
    SELLER_FINALIZATION_HOURS: number;
    SELLER_MAX_VARIANCE_PERCENT: number;
    SELLER_BILLING_TERMS: Record<string, SellerBilling>;
    ADCP_SELLERS: ReadonlyArray<{ key: string; billing?: SellerBilling }>;
  },
  adapterKey: string,
): BillingTermsOfSeller {
  const adcp = sellerOfAdapter(config.ADCP_SELLERS, adapterKey)?.billing;
  const own = { ...config.SELLER_BILLING_TERMS[adapterKey], ...adcp };
  return {
    finalizationHours: own.finalizationHours ?? config.SELLER_FINALIZATION_HOURS,
    maxVariancePercent: own.maxVariancePercent ?? config.SELLER_MAX_VARIANCE_PERCENT,
  };
}
