import type { Knex } from 'knex';
import type { Config } from '../config/config';
import type { Logger } from '../logger';
import type { PaymentProvider } from './provider';
import { sandboxProvider, type SandboxProvider } from './sandbox-provider';
import { settleProviderEvent } from './settlement';
import { stripeProvider } from './stripe-provider';
import { saveTerms } from '../wallet/fees';
import { unavailable } from '../errors';

export interface Payments {
  provider: PaymentProvider;
  /** Present in sandbox billing: the local checkout page acts through it. */
  sandbox: SandboxProvider | null;
  webhookSecret: string;
  settle(rawBody: Buffer, signature: string | undefined): ReturnType<typeof settleProviderEvent>;
}

/** Builds the payment side of the service from configuration: Stripe when live, the sandbox otherwise. */
export function createPayments(db: Knex, config: Config, logger: Logger, baseUrl: () => string): Payments {
  const webhookSecret = config.BILLING_MODE === 'live' ? (config.STRIPE_WEBHOOK_SECRET ?? '') : config.BILLING_SANDBOX_WEBHOOK_SECRET;
  const settle = (raw: Buffer, signature: string | undefined) => {
    // Without a signing secret no event can be verified, so none is accepted.
    if (!webhookSecret) return Promise.reject(notConfigured());
    return settleProviderEvent(db, raw, signature, webhookSecret, logger);
  };
  if (config.BILLING_MODE === 'live') {
    // loadConfig refuses live billing without its keys; a process built otherwise answers 503 rather than not starting.
    const provider = config.STRIPE_SECRET_KEY ? stripeProvider(config.STRIPE_SECRET_KEY, config.STRIPE_API_URL) : unconfigured;
    return { provider, sandbox: null, webhookSecret, settle };
  }
  const sandbox = sandboxProvider(db, { webhookSecret, baseUrl, deliver: settle });
  return { provider: sandbox, sandbox, webhookSecret, settle };
}

const notConfigured = () => unavailable('Live billing has no payment provider key or webhook secret configured.', 'billing_not_configured');

const unconfigured: PaymentProvider = {
  name: 'stripe',
  createCheckoutSession: () => Promise.reject(notConfigured()),
  retrieveSession: () => Promise.reject(notConfigured()),
};

/**
 * Each process records the deployment's fee terms, where fee accrual reads them. It never
 * holds up a start: while the database is away it tries again every few seconds.
 */
export function recordBillingTerms(db: Knex, config: Config, logger: Logger): Promise<void> {
  const terms = { scaleTrailingMonths: config.BILLING_SCALE_TRAILING_MONTHS, scaleThresholdMinor: config.BILLING_SCALE_THRESHOLD_MINOR };
  return saveTerms(db, terms).catch((err: Error) => {
    logger.warn({ err: { message: err.message } }, 'billing terms not recorded yet; retrying');
    const retry = setInterval(() => {
      saveTerms(db, terms).then(
        () => clearInterval(retry),
        () => undefined,
      );
    }, 5_000);
    retry.unref();
  });
}
