import { randomBytes, randomUUID } from 'node:crypto';
import type { Knex } from 'knex';
import { z } from 'zod';
import { badRequest, conflict, notFound } from '../errors';
import type { Principal } from '../auth/principal';
import { toMinor } from '../db/knex';
import { mismatchesOf } from './settlement';
import type { PaymentProvider } from './provider';

/** Funding requests: a human asks to top up the wallet; only signed settlement credits it. */
export const FundingRequestIdSchema = z.string().regex(/^wtr-[a-f0-9]{64}$/, 'a funding request id: wtr- and 64 lowercase hex');

export const TopupRequestSchema = z
  .strictObject({ amountMinor: z.number().int().min(1).max(Number.MAX_SAFE_INTEGER), currency: z.literal('GBP') })
  .meta({ id: 'TopupRequest' });

export const ReconcileRequestSchema = z
  .strictObject({
    sessionId: z
      .string()
      .max(255)
      .regex(/^cs_[A-Za-z0-9_]+$/, 'a checkout session reference: cs_…'),
  })
  .meta({ id: 'ReconcileFundingRequest' });

interface Row {
  id: string;
  advertiser_id: string;
  amount_minor: string;
  currency: string;
  status: string;
  provider: string;
  session_id: string | null;
  checkout_url: string | null;
  created_by: string;
  created_at: Date;
  updated_at: Date;
  credited_at: Date | null;
}

export function fundingRequestView(r: Row) {
  return {
    id: r.id,
    status: r.status,
    amountMinor: toMinor(r.amount_minor),
    currency: r.currency,
    provider: r.provider,
    sessionId: r.session_id,
    checkoutUrl: r.checkout_url,
    createdBy: r.created_by,
    createdAt: r.created_at.toISOString(),
    updatedAt: r.updated_at.toISOString(),
    creditedAt: r.credited_at ? r.credited_at.toISOString() : null,
  };
}

export interface TopupBounds {
  minMinor: number;
  maxMinor: number;
  returnUrl: string;
}

/**
 * Commits the request first (so that whatever the provider does, there is a record to settle
 * against), then opens the provider's checkout session for it.
 */
export async function createTopup(
  db: Knex,
  provider: PaymentProvider,
  p: Principal,
  body: z.infer<typeof TopupRequestSchema>,
  b: TopupBounds,
) {
  if (body.amountMinor < b.minMinor || body.amountMinor > b.maxMinor) {
    throw badRequest(`A top-up is between ${b.minMinor} and ${b.maxMinor} minor units.`, [
      { path: 'body.amountMinor', message: `must be between ${b.minMinor} and ${b.maxMinor}` },
    ]);
  }
  const id = `wtr-${randomBytes(32).toString('hex')}`;
  await db('funding_requests').insert({
    id,
    advertiser_id: p.advertiserId,
    amount_minor: body.amountMinor,
    currency: body.currency,
    status: 'created',
    provider: provider.name,
    created_by: p.userId,
  });
  const session = await provider
    .createCheckoutSession({ requestId: id, advertiserId: p.advertiserId, amountMinor: body.amountMinor, returnUrl: b.returnUrl })
    .catch(async (err: unknown) => {
      // No checkout was opened: the request can never be paid. A retry makes a new one.
      await db('funding_requests').where({ id, status: 'created' }).update({ status: 'failed', updated_at: db.fn.now() });
      throw err;
    });
  const [row] = (await db('funding_requests')
    .where({ id, status: 'created' })
    .update({ status: 'open', session_id: session.id, checkout_url: session.url, updated_at: db.fn.now() })
    .returning('*')) as Row[];
  // A settlement that arrived before this update already moved the request on: show it as it is.
  const current = row ?? ((await db('funding_requests').where({ id }).first()) as Row);
  return { request: fundingRequestView(current), checkoutUrl: session.url };
}

async function findRequest(db: Knex, p: Principal, id: string): Promise<Row> {
  const row = (await db('funding_requests').where({ id, advertiser_id: p.advertiserId }).first()) as Row | undefined;
  if (!row) throw notFound();
  return row;
}

/** Spec 26: the request, its provider session, settlement events and ledger entries. */
export async function inspectTopup(db: Knex, p: Principal, id: string) {
  const row = await findRequest(db, p, id);
  const events = await db('funding_events').where({ request_id: id }).orderBy('received_at');
  const entries = await db('wallet_entries').where({ subject_type: 'funding_request', subject_id: id }).orderBy('id');
  const reconciliations = await db('funding_reconciliations').where({ request_id: id }).orderBy('created_at');
  return {
    request: fundingRequestView(row),
    settlementEvents: events.map((e) => ({
      id: e.id,
      type: e.type,
      sessionId: e.session_id,
      result: e.result,
      receivedAt: (e.received_at as Date).toISOString(),
    })),
    ledgerEntries: entries.map((e) => ({
      id: String(e.id),
      kind: e.kind,
      amountMinor: toMinor(e.amount_minor),
      currency: e.currency,
      createdAt: (e.created_at as Date).toISOString(),
    })),
    reconciliations: reconciliations.map(reconciliationView),
  };
}

function reconciliationView(r: Record<string, unknown>) {
  return {
    id: r.id,
    sessionId: r.session_id,
    result: r.result,
    detail: r.detail,
    reconciledBy: r.reconciled_by,
    createdAt: (r.created_at as Date).toISOString(),
  };
}

const RESEND =
  'The provider shows this session paid, but no signed settlement has credited the wallet. Reconciliation never credits: ' +
  'have the provider deliver the event again (in Stripe: Dashboard → Developers → Events → the checkout.session event → Resend, ' +
  'or `stripe events resend <event id>`), and the signed settlement will credit it once.';

/**
 * Spec 27: fetches the exact provider session, matches it against the request and records the
 * result as evidence. It never credits the wallet.
 */
export async function reconcileTopup(
  db: Knex,
  provider: PaymentProvider,
  p: Principal,
  id: string,
  body: z.infer<typeof ReconcileRequestSchema>,
) {
  const row = await findRequest(db, p, id);
  const session = await provider.retrieveSession(body.sessionId);
  const belongsElsewhere =
    session !== null &&
    ((session.metadata?.request_id !== undefined && session.metadata.request_id !== id) ||
      (row.session_id !== null && row.session_id !== session.id));
  if (belongsElsewhere) throw conflict('That checkout session belongs to another funding request.', 'session_mismatch', 'terminal');

  let result: 'matched' | 'mismatched' | 'unpaid' | 'not-found';
  let detail: Record<string, unknown>;
  if (!session) {
    result = 'not-found';
    detail = { note: 'The payment provider has no such session.' };
  } else {
    const wrong = mismatchesOf(row, session);
    const paid = session.payment_status === 'paid';
    result = wrong.length ? 'mismatched' : paid ? 'matched' : 'unpaid';
    detail = {
      providerStatus: session.status,
      paymentStatus: session.payment_status,
      amountTotal: session.amount_total,
      currency: session.currency,
      mismatched: wrong,
      ...(paid && !wrong.length && row.status !== 'credited' ? { note: RESEND } : {}),
    };
  }
  const reconciliation = {
    id: randomUUID(),
    request_id: id,
    session_id: body.sessionId,
    result,
    detail: JSON.stringify(detail),
    reconciled_by: p.userId,
  };
  const [stored] = await db('funding_reconciliations').insert(reconciliation).returning('*');
  return {
    reconciliation: reconciliationView(stored),
    request: fundingRequestView(row),
    credited: false,
    note: 'Reconciliation records evidence only; it never credits the wallet. Signed settlement remains required.',
  };
}
