import type { Knex } from 'knex';
import { recordEvent } from '../events/record';
import { badRequest } from '../errors';
import type { Logger } from '../logger';
import { post } from '../wallet/ledger';
import { verifyEvent, type CheckoutSession, type ProviderEvent } from './provider';

/**
 * Signed settlement: the only way money enters a wallet. A provider event is verified with
 * the SDK (signature, 300 s tolerance), kept as evidence once per event id, and applied to
 * its funding request under the request's row lock. A request is credited at most once,
 * whatever the number, order or timing of deliveries; a payment whose amount, currency or
 * workspace differs from the request credits nothing and marks it `mismatch`.
 */
const HANDLED = new Set([
  'checkout.session.completed',
  'checkout.session.async_payment_succeeded',
  'checkout.session.async_payment_failed',
  'checkout.session.expired',
]);

export type SettlementResult =
  | 'credited'
  | 'already-credited'
  | 'mismatch'
  | 'processing'
  | 'failed'
  | 'expired'
  | 'no-change'
  | 'unknown-request'
  | 'duplicate'
  | 'ignored';

interface FundingRow {
  id: string;
  advertiser_id: string;
  amount_minor: string;
  currency: string;
  status: string;
  session_id: string | null;
}

/** What about a paid session does not match its request; empty when it all does. */
export function mismatchesOf(request: FundingRow, session: CheckoutSession): string[] {
  const wrong: string[] = [];
  if (session.metadata?.request_id !== request.id && session.client_reference_id !== request.id) wrong.push('request');
  if (request.session_id && session.id !== request.session_id) wrong.push('session');
  if (session.amount_total !== Number(request.amount_minor)) wrong.push('amount');
  if ((session.currency ?? '').toUpperCase() !== request.currency) wrong.push('currency');
  if (session.metadata?.workspace !== request.advertiser_id) wrong.push('workspace');
  return wrong;
}

export const isPaid = (event: ProviderEvent, session: CheckoutSession) =>
  event.type === 'checkout.session.async_payment_succeeded' ||
  (event.type === 'checkout.session.completed' && session.payment_status === 'paid');

/** A late failure or expiry never undoes a credit or a mismatch; a payment beats an earlier failure. */
const SETTLED = ['credited', 'mismatch'];

async function apply(trx: Knex, event: ProviderEvent, request: FundingRow): Promise<SettlementResult> {
  const session = event.data.object as CheckoutSession;
  const set = (status: string, extra: Record<string, unknown> = {}) =>
    trx('funding_requests')
      .where({ id: request.id })
      .update({ status, updated_at: trx.fn.now(), ...extra });
  if (isPaid(event, session)) {
    if (request.status === 'credited') return 'already-credited';
    if (request.status === 'mismatch') return 'mismatch';
    if (mismatchesOf(request, session).length) {
      await set('mismatch');
      return 'mismatch';
    }
    await post(trx, {
      advertiserId: request.advertiser_id,
      kind: 'funding_credit',
      amountMinor: Number(request.amount_minor),
      subjectType: 'funding_request',
      subjectId: request.id,
      actorId: 'payment-provider',
      detail: { eventId: event.id, sessionId: session.id },
    });
    await set('credited', { credited_at: trx.fn.now(), session_id: session.id });
    await recordEvent(trx, {
      workspaceId: request.advertiser_id,
      type: 'funding.credited',
      subjectId: request.id,
      subjectVersion: 1,
      body: { fundingRequestId: request.id, amountMinor: Number(request.amount_minor), currency: request.currency },
    });
    return 'credited';
  }
  if (SETTLED.includes(request.status)) return 'no-change';
  switch (event.type) {
    case 'checkout.session.completed':
      if (!['created', 'open'].includes(request.status)) return 'no-change';
      await set('processing');
      return 'processing';
    case 'checkout.session.async_payment_failed':
      await set('failed');
      return 'failed';
    default:
      if (request.status === 'failed') return 'no-change';
      await set('expired');
      return 'expired';
  }
}

export async function settleProviderEvent(
  db: Knex,
  rawBody: Buffer,
  signature: string | undefined,
  secret: string,
  logger: Logger,
): Promise<{ received: true; result: SettlementResult }> {
  let event: ProviderEvent;
  try {
    event = verifyEvent(rawBody, signature ?? '', secret);
  } catch (err) {
    // Never the body, the header or the secret: only that it was refused and why.
    logger.warn({ reason: err instanceof Error ? err.name : 'unknown' }, 'payment provider event refused');
    throw badRequest('The event is not signed by the payment provider, is stale, or is malformed.', undefined, 'invalid_signature');
  }
  if (!HANDLED.has(event.type)) return { received: true, result: 'ignored' };
  const session = event.data.object as CheckoutSession;
  const requestId = session.metadata?.request_id ?? session.client_reference_id ?? null;

  const result = await db.transaction(async (trx): Promise<SettlementResult> => {
    const kept = await trx('funding_events')
      .insert({
        id: event.id,
        request_id: requestId,
        type: event.type,
        session_id: session.id,
        result: 'pending',
        payload: JSON.stringify(event),
      })
      .onConflict('id')
      .ignore()
      .returning('id');
    if (!kept.length) return 'duplicate';
    const request = requestId
      ? ((await trx('funding_requests').where({ id: requestId }).forUpdate().first()) as FundingRow | undefined)
      : undefined;
    const outcome = request ? await apply(trx, event, request) : 'unknown-request';
    await trx('funding_events').where({ id: event.id }).update({ result: outcome });
    return outcome;
  });
  logger.info({ eventId: event.id, type: event.type, requestId, result }, 'payment provider event settled');
  return { received: true, result };
}
