import { z } from 'zod';
import { SellerBillingSchema } from './seller-billing';

/**
 * The AdCP sellers a deployment buys from (ADCP_SELLERS, a JSON list). Each becomes the supplier
 * adapter `adcp-<key>`, with its own queue and workers. A seller is either a sandbox seller (only
 * sandbox bookings reach it, always with `account.sandbox: true`) or a live one (only live
 * bookings reach it): never both, so no sandbox booking can reach a live seller.
 */
export const AdcpSellerSchema = z.strictObject({
  /** Short name; the adapter key is `adcp-<key>`. */
  key: z.string().regex(/^[a-z][a-z0-9-]{0,40}$/, 'lower-case letters, digits and dashes, starting with a letter'),
  /** The seller's MCP endpoint, e.g. https://sales.example.com/mcp. */
  agentUrl: z.url({ protocol: /^https?$/ }),
  /**
   * The environment variable that holds the bearer credential this deployment presents to the
   * seller: configuration names where the secret is, never the secret itself.
   */
  credentialEnv: z
    .string()
    .regex(/^[A-Z][A-Z0-9_]{0,100}$/, 'an environment variable name')
    .optional(),
  /** Flightdeck channels bought from this seller. */
  channels: z.array(z.string().regex(/^[a-z]+$/)).min(1),
  /** A sandbox seller (or the seller's sandbox): takes sandbox bookings only. */
  sandbox: z.boolean(),
  /**
   * Where the seller publishes its webhook-signing keys (a JWKS URL). With it (and PUBLIC_BASE_URL),
   * bookings ask the seller to push their outcome to Flightdeck, and only webhooks signed (RFC 9421)
   * with one of these keys are heard; without it, outcomes are polled only.
   */
  webhookJwksUrl: z.url({ protocol: /^https?$/ }).optional(),
  /** A name for people; defaults to the key. */
  display: z.string().min(1).max(200).optional(),
  /** The seller's billing terms: finalization window and invoice variance (docs/billing.md). */
  billing: SellerBillingSchema.optional(),
});
export type AdcpSeller = z.infer<typeof AdcpSellerSchema>;

export const AdcpSellersSchema = z
  .string()
  .default('[]')
  .transform((v, ctx) => {
    try {
      return JSON.parse(v) as unknown;
    } catch {
      ctx.addIssue({ code: 'custom', message: 'must be JSON' });
      return z.NEVER;
    }
  })
  .pipe(
    z
      .array(AdcpSellerSchema)
      .max(50)
      .refine((list) => new Set(list.map((s) => s.key)).size === list.length, 'seller keys must be unique'),
  );

export const adcpAdapterKey = (sellerKey: string) => `adcp-${sellerKey}`;

/**
 * The sellers named in the environment when the process started. The adapter catalogue (and so
 * the queues) is fixed at start; a bad list is caught by the configuration check at start too.
 */
export function adcpSellersAtStart(env: NodeJS.ProcessEnv = process.env): AdcpSeller[] {
  const parsed = AdcpSellersSchema.safeParse(env.ADCP_SELLERS || undefined);
  return parsed.success ? parsed.data : [];
}
