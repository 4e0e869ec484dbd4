import { z } from 'zod';
import { SellerBillingSchema } from './seller-billing';

/**
 * The AdCP sellers a deployment buys from (ADCP_SELLERS, a JSON list). Each becomes the supplier
 * adapter `adcp-<key>`, with its own queue and workers. A seller is either a sandbox seller (only
 * sandbox bookings reach it, always with `account.sandbox: true`) or a live one (only live
 * bookings reach it): never both, so no sandbox booking can reach a live seller.
 */
/** How a seller authenticates the webhooks it pushes (AdCP 3.0 `push_notification_config`). */
export const WEBHOOK_AUTH_SCHEMES = ['rfc9421', 'hmac-sha256', 'bearer'] as const;
export type WebhookAuthScheme = (typeof WEBHOOK_AUTH_SCHEMES)[number];

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
  /**
   * Where the seller publishes the webhook-signing keys it has withdrawn (an AdCP revocation
   * snapshot). With it, a webhook signed by a withdrawn key is refused, and so is every webhook
   * while the snapshot is out of date past its grace (fail closed).
   */
  webhookRevocationUrl: z.url({ protocol: /^https?$/ }).optional(),
  /**
   * How the seller authenticates its webhooks: `rfc9421` (the AdCP profile, its keys at
   * webhookJwksUrl; the default when that is set), or AdCP 3.0's legacy `hmac-sha256` or `bearer`,
   * with a secret this service issues the seller in each booking (sealed at rest). Prebid's Sales
   * Agent signs with `hmac-sha256`.
   */
  webhookAuth: z.enum(WEBHOOK_AUTH_SCHEMES).optional(),
  /**
   * Whether the seller carries out a cancel (`canceled` on update_media_buy). When it does not
   * (Prebid's Sales Agent has no cancel path), a stop is asked as a pause, proven by the seller's
   * delivery, and staff are given the task of ending the buy at the seller by hand.
   */
  honoursCancel: z.boolean().default(true),
  /** Whether budget and end-date changes reach the seller's ad server, not only its own records. */
  appliesFlightChanges: z.boolean().default(true),
  /** Hours after a day before the seller's delivery for it is complete enough to prove a change by. */
  reportingDelayHours: z.number().int().min(0).max(168).default(6),
  /** A name for people; defaults to the key. */
  display: z.string().min(1).max(200).optional(),
  /** The seller's billing terms: finalization window and invoice variance (docs/billing.md). */
  billing: SellerBillingSchema.optional(),
});
export type AdcpSeller = z.infer<typeof AdcpSellerSchema>;
/** A seller as configured, its defaults not yet filled in. */
export type AdcpSellerInput = z.input<typeof AdcpSellerSchema>;

/** How the seller's webhooks are authenticated, or null when it pushes none (its outcomes are polled). */
export function webhookAuthOf(seller: Pick<AdcpSeller, 'webhookAuth' | 'webhookJwksUrl'>): WebhookAuthScheme | null {
  return seller.webhookAuth ?? (seller.webhookJwksUrl ? 'rfc9421' : null);
}

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
      .array(
        AdcpSellerSchema.refine((s) => s.webhookAuth !== 'rfc9421' || !!s.webhookJwksUrl, {
          path: ['webhookJwksUrl'],
          message: 'webhookAuth rfc9421 needs the JWKS URL the seller signs with',
        }),
      )
      .max(50)
      .refine((list) => new Set(list.map((s) => s.key)).size === list.length, 'seller keys must be unique'),
  );

export { adcpAdapterKey, sellerOfAdapter } from './adcp-keys';

/**
 * The sellers named in the environment when the process started. The adapter catalogue (and so
 * the queues) is fixed at start; a bad list is caught by the configuration check at start too.
 */
export function adcpSellersAtStart(env: NodeJS.ProcessEnv = process.env): AdcpSeller[] {
  const parsed = AdcpSellersSchema.safeParse(env.ADCP_SELLERS || undefined);
  return parsed.success ? parsed.data : [];
}
