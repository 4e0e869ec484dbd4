import Stripe from 'stripe';
import { Problem } from '../errors';

/**
 * The payment provider behind wallet top-ups. Its objects and events have Stripe's shapes
 * (Checkout Sessions, signed `checkout.session.*` events), whether the provider is Stripe
 * itself (live) or the deterministic sandbox, so one settlement path handles both.
 */
export type CheckoutSession = Stripe.Checkout.Session;
export type ProviderEvent = Stripe.Event;

export interface NewCheckout {
  requestId: string;
  advertiserId: string;
  amountMinor: number;
  /** Where the provider sends the payer afterwards. */
  returnUrl: string;
}

export interface PaymentProvider {
  readonly name: 'sandbox' | 'stripe';
  createCheckoutSession(c: NewCheckout): Promise<{ id: string; url: string }>;
  /** The session as the provider has it now; null when it has no such session. */
  retrieveSession(sessionId: string): Promise<CheckoutSession | null>;
}

/** The provider could not be reached or failed on its side: retry later. */
export const providerUnavailable = () =>
  new Problem(
    503,
    'payment_provider_unavailable',
    'Service unavailable',
    'The payment provider could not be reached. Try again shortly.',
    'transient',
    undefined,
    { 'retry-after': '5' },
  );

/** Signature tolerance: an event signed longer ago than this is refused as a replay. */
export const SIGNATURE_TOLERANCE_SECONDS = 300;

/** Verifies and parses a provider event with the SDK; throws on a bad, stale or malformed one. */
export function verifyEvent(rawBody: Buffer, signatureHeader: string, secret: string): ProviderEvent {
  return Stripe.webhooks.constructEvent(rawBody, signatureHeader, secret, SIGNATURE_TOLERANCE_SECONDS);
}
