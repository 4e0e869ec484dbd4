import { createHash, randomBytes } from 'node:crypto';
import Stripe from 'stripe';
import type { Knex } from 'knex';
import type { CheckoutSession, NewCheckout, PaymentProvider } from './provider';

/**
 * A deterministic stand-in for Stripe Checkout that needs no keys. Sessions (`cs_test_…`)
 * have Stripe's shape; a local checkout page lets a person pay or cancel; every outcome is
 * sent as a `checkout.session.*` event in Stripe's format, signed with Stripe's scheme and
 * the configured webhook secret, to the same settlement code a live event reaches.
 *
 * What the payer does on the page picks the outcome, like a provider's test cards:
 *   pay          → checkout.session.completed, paid
 *   pay-delayed  → checkout.session.completed, unpaid; then checkout.session.async_payment_succeeded
 *   fail         → checkout.session.completed, unpaid; then checkout.session.async_payment_failed
 *   cancel       → checkout.session.expired
 */
export const SANDBOX_ACTIONS = ['pay', 'pay-delayed', 'fail', 'cancel'] as const;
export type SandboxAction = (typeof SANDBOX_ACTIONS)[number];

export type Deliver = (rawBody: Buffer, signature: string) => Promise<unknown>;

export interface SandboxProviderOptions {
  webhookSecret: string;
  /** The public base URL of this service, for the checkout page's address (known once it listens). */
  baseUrl: () => string;
  deliver: Deliver;
}

export const SANDBOX_CHECKOUT_PATH = '/billing/sandbox-checkout';

const sessionIdFor = (requestId: string) => `cs_test_${createHash('sha256').update(requestId).digest('hex').slice(0, 48)}`;

async function load(db: Knex, id: string): Promise<CheckoutSession | null> {
  const row = await db('sandbox_checkout_sessions').where({ id }).first('session');
  return row ? (row.session as CheckoutSession) : null;
}

async function save(db: Knex, session: CheckoutSession): Promise<void> {
  await db('sandbox_checkout_sessions')
    .insert({ id: session.id, session: JSON.stringify(session) })
    .onConflict('id')
    .merge();
}

/** An event exactly as the provider would send it, and its `Stripe-Signature` header. */
export function signedEvent(type: string, session: CheckoutSession, secret: string): { raw: Buffer; signature: string } {
  const event = {
    id: `evt_test_${randomBytes(12).toString('hex')}`,
    object: 'event',
    api_version: Stripe.API_VERSION,
    created: Math.floor(Date.now() / 1000),
    livemode: false,
    pending_webhooks: 1,
    request: { id: null, idempotency_key: null },
    type,
    data: { object: session },
  };
  const payload = JSON.stringify(event);
  return { raw: Buffer.from(payload), signature: Stripe.webhooks.generateTestHeaderString({ payload, secret }) };
}

export interface SandboxProvider extends PaymentProvider {
  act(sessionId: string, action: SandboxAction): Promise<CheckoutSession | null>;
  session(sessionId: string): Promise<CheckoutSession | null>;
}

export function sandboxProvider(db: Knex, opts: SandboxProviderOptions): SandboxProvider {
  const emit = async (type: string, session: CheckoutSession) => {
    const { raw, signature } = signedEvent(type, session, opts.webhookSecret);
    await opts.deliver(raw, signature);
  };
  return {
    name: 'sandbox',
    async createCheckoutSession(c: NewCheckout) {
      const id = sessionIdFor(c.requestId);
      const existing = await load(db, id);
      if (existing) return { id, url: existing.url! };
      const now = Math.floor(Date.now() / 1000);
      const session = {
        id,
        object: 'checkout.session',
        mode: 'payment',
        livemode: false,
        amount_total: c.amountMinor,
        amount_subtotal: c.amountMinor,
        currency: 'gbp',
        client_reference_id: c.requestId,
        metadata: { request_id: c.requestId, workspace: c.advertiserId },
        payment_status: 'unpaid',
        status: 'open',
        success_url: c.returnUrl,
        cancel_url: c.returnUrl,
        url: `${opts.baseUrl()}${SANDBOX_CHECKOUT_PATH}/${id}`,
        created: now,
        expires_at: now + 24 * 3600,
      } as unknown as CheckoutSession;
      await save(db, session);
      return { id, url: session.url! };
    },
    retrieveSession: (sessionId) => load(db, sessionId),
    session: (sessionId) => load(db, sessionId),

    /** The payer's choice on the checkout page. Acting on a closed session changes nothing. */
    async act(sessionId, action) {
      const session = await load(db, sessionId);
      if (!session || session.status !== 'open') return session;
      if (action === 'cancel') {
        const expired = { ...session, status: 'expired' } as CheckoutSession;
        await save(db, expired);
        await emit('checkout.session.expired', expired);
        return expired;
      }
      const completed = { ...session, status: 'complete', payment_status: action === 'pay' ? 'paid' : 'unpaid' } as CheckoutSession;
      await save(db, completed);
      await emit('checkout.session.completed', completed);
      if (action === 'pay') return completed;
      const settled = { ...completed, payment_status: action === 'pay-delayed' ? 'paid' : 'unpaid' } as CheckoutSession;
      await save(db, settled);
      await emit(action === 'pay-delayed' ? 'checkout.session.async_payment_succeeded' : 'checkout.session.async_payment_failed', settled);
      return settled;
    },
  };
}
