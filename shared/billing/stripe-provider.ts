import Stripe from 'stripe';
import type { CheckoutSession, NewCheckout, PaymentProvider } from './provider';
import { providerUnavailable } from './provider';

/** Stripe Checkout, through the official SDK. The funding request id travels in metadata. */
export function stripeProvider(secretKey: string, apiUrl?: string): PaymentProvider {
  const api = apiUrl ? new URL(apiUrl) : null;
  const stripe = new Stripe(secretKey, {
    maxNetworkRetries: 2,
    timeout: 10_000,
    ...(api
      ? {
          host: api.hostname,
          port: Number(api.port || (api.protocol === 'https:' ? 443 : 80)),
          protocol: api.protocol.slice(0, -1) as 'http' | 'https',
        }
      : {}),
  });
  const unavailableOnOutage = (err: unknown): never => {
    if (err instanceof Stripe.errors.StripeConnectionError || err instanceof Stripe.errors.StripeAPIError) throw providerUnavailable();
    throw err;
  };
  return {
    name: 'stripe',
    async createCheckoutSession(c: NewCheckout) {
      const session = await stripe.checkout.sessions
        .create(
          {
            mode: 'payment',
            line_items: [
              {
                price_data: { currency: 'gbp', unit_amount: c.amountMinor, product_data: { name: 'Flightdeck wallet top-up' } },
                quantity: 1,
              },
            ],
            client_reference_id: c.requestId,
            metadata: { request_id: c.requestId, workspace: c.advertiserId },
            payment_intent_data: { metadata: { request_id: c.requestId, workspace: c.advertiserId } },
            success_url: c.returnUrl,
            cancel_url: c.returnUrl,
          },
          // The request id makes a retried creation return the same session.
          { idempotencyKey: c.requestId },
        )
        .catch(unavailableOnOutage);
      return { id: session.id, url: session.url ?? c.returnUrl };
    },
    async retrieveSession(sessionId: string): Promise<CheckoutSession | null> {
      try {
        return await stripe.checkout.sessions.retrieve(sessionId);
      } catch (err) {
        if (err instanceof Stripe.errors.StripeInvalidRequestError && err.code === 'resource_missing') return null;
        return unavailableOnOutage(err);
      }
    },
  };
}
