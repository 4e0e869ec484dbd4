import { randomBytes, randomUUID } from 'node:crypto';
import type { Knex } from 'knex';
import Stripe from 'stripe';
import type { TestEnv } from '../support/api';
import { ensureWorkspace } from '../../shared/workspaces/workspace-store';
import { reserveCommitment } from '../../shared/wallet/wallet';
import type { CheckoutSession } from '../../shared/billing/provider';

export const SANDBOX_SECRET = 'whsec_flightdeck_sandbox_events';

/** A funding request as the top-up route commits it, with its provider session. */
export async function fundingRequest(db: Knex, advertiserId: string, amountMinor: number) {
  await ensureWorkspace(db, advertiserId);
  const id = `wtr-${randomBytes(32).toString('hex')}`;
  const sessionId = `cs_test_${randomBytes(24).toString('hex')}`;
  await db('funding_requests').insert({
    id,
    advertiser_id: advertiserId,
    amount_minor: amountMinor,
    currency: 'GBP',
    status: 'open',
    provider: 'sandbox',
    session_id: sessionId,
    created_by: 'payer',
  });
  return { id, sessionId };
}

/** A checkout session in the provider's shape. */
export function session(over: Partial<Record<string, unknown>> & { id: string; requestId: string; workspace: string; amount: number }) {
  const { id, requestId, workspace, amount, ...rest } = over;
  return {
    id,
    object: 'checkout.session',
    amount_total: amount,
    currency: 'gbp',
    client_reference_id: requestId,
    metadata: { request_id: requestId, workspace },
    payment_status: 'paid',
    status: 'complete',
    ...rest,
  } as unknown as CheckoutSession;
}

/** A provider event and its signature, made with the SDK's own test helper. */
export function signed(type: string, object: CheckoutSession, opts: { secret?: string; timestamp?: number; id?: string } = {}) {
  const payload = JSON.stringify({
    id: opts.id ?? `evt_${randomUUID().replace(/-/g, '')}`,
    object: 'event',
    type,
    created: Math.floor(Date.now() / 1000),
    livemode: false,
    data: { object },
  });
  const header = Stripe.webhooks.generateTestHeaderString({
    payload,
    secret: opts.secret ?? SANDBOX_SECRET,
    ...(opts.timestamp ? { timestamp: opts.timestamp } : {}),
  });
  return { payload, header };
}

/**
 * A live booking as a launch writes it (campaign, plan, booking, lines) with its commitment
 * reserved on the ledger. Money is what these tests are about; how launch decides is tested elsewhere.
 */
export async function liveBooking(env: TestEnv, advertiserId: string, budgets: number[], commitment: number) {
  await ensureWorkspace(env.db, advertiserId);
  const campaignId = randomUUID();
  const planId = randomUUID();
  const bookingId = randomUUID();
  const budget = budgets.reduce((s, b) => s + b, 0);
  return env.db.transaction(async (trx) => {
    await trx('campaigns').insert({
      id: campaignId,
      advertiser_id: advertiserId,
      name: 'Ledger test',
      client_name: 'Acme',
      start_date: '2099-03-01',
      end_date: '2099-03-31',
      budget_minor: budget,
      maximum_commitment_minor: commitment,
      channels: ['ctv'],
      execution_mode: 'live',
      status: 'booked',
      created_by: 'test',
    });
    await trx('plans').insert({ id: planId, campaign_id: campaignId, advertiser_id: advertiserId, status: 'approved', lines: '[]' });
    await trx('bookings').insert({
      id: bookingId,
      advertiser_id: advertiserId,
      campaign_id: campaignId,
      plan_id: planId,
      status: 'queued',
      execution_mode: 'live',
      snapshot_digest: 'a'.repeat(64),
      approved_snapshot: '{}',
      media_budget_minor: budget,
      maximum_commitment_minor: commitment,
      submitted_at: new Date(),
      confirmation_due_at: new Date(Date.now() + 3600_000),
      launched_by: 'test',
    });
    await reserveCommitment(trx, advertiserId, bookingId, commitment, 'test');
    const lines = budgets.map((b, position) => ({
      id: randomUUID(),
      booking_id: bookingId,
      advertiser_id: advertiserId,
      plan_line_id: randomUUID(),
      position,
      channel_campaign_id: `cc-${randomUUID()}`,
      adapter_key: 'live-ctv',
      channel: 'ctv',
      budget_minor: b,
      execution_mode: 'live',
      status: 'queued',
    }));
    await trx('booking_lines').insert(lines);
    return { bookingId, lineIds: lines.map((l) => l.id) };
  });
}
