import type { Knex } from 'knex';
import type { Config } from '../config';
import type { Logger } from '../logger';
import type { PaymentProvider } from './provider';
import { sandboxProvider, type SandboxProvider } from './sandbox-provider';
import { settleProviderEvent } from './settlement';
import { stripeProvider } from './stripe-provider';
import { saveTerms } from './fees';

export interface Payments {
  provider: PaymentProvider;
  /** Present in sandbox billing: the local checkout page acts through it. */
  sandbox: SandboxProvider | null;
  webhookSecret: string;
  settle(rawBody: Buffer, signature: string | undefined): ReturnType<typeof settleProviderEvent>;
}

/** Builds the payment side of the service from configuration: Stripe when live, the sandbox otherwise. */
export function createPayments(db: Knex, config: Config, logger: Logger, baseUrl: () => string): Payments {
  const webhookSecret = config.BILLING_MODE === 'live' ? config.STRIPE_WEBHOOK_SECRET! : config.BILLING_SANDBOX_WEBHOOK_SECRET;
  const settle = (raw: Buffer, signature: string | undefined) => settleProviderEvent(db, raw, signature, webhookSecret, logger);
  if (config.BILLING_MODE === 'live')
    return { provider: stripeProvider(config.STRIPE_SECRET_KEY!, config.STRIPE_API_URL), sandbox: null, webhookSecret, settle };
  const sandbox = sandboxProvider(db, { webhookSecret, baseUrl, deliver: settle });
  return { provider: sandbox, sandbox, webhookSecret, settle };
}

/** Each process records the deployment's fee terms at start, where fee accrual reads them. */
export const recordBillingTerms = (db: Knex, config: Config) =>
  saveTerms(db, { scaleTrailingMonths: config.BILLING_SCALE_TRAILING_MONTHS, scaleThresholdMinor: config.BILLING_SCALE_THRESHOLD_MINOR });
