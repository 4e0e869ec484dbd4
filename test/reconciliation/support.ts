import { randomUUID } from 'node:crypto';
import type { ApiClient, TestEnv } from '../support/api';
import { fundWallet, walletAndLedger } from '../support/wallet';
import { liveBooking } from '../billing/support';
import { confirmLines, day } from '../delivery/support';
import { recordDelivery } from '../../shared/delivery/delivery-store';
import { settleDelivery } from '../../shared/delivery/delivery-money';
import { lastDayOfPeriod, settleFinality } from '../../shared/delivery/finality';
import { addDays } from '../../shared/dates';
import { SYSTEM } from '../../shared/auth/actor';
import type { DeliveryDay } from '../../shared/adapters/adapter';

/** After March 2099's window has passed for a seller whose window is 72 hours. */
export const APRIL = new Date('2099-04-10T00:00:00Z');

/** A seller's report of one live line's days, stored and its money settled as the poller does. */
export async function deliver(env: TestEnv, line: { lineId: string; bookingId: string; advertiserId: string }, days: DeliveryDay[]) {
  return env.db.transaction(async (trx) => {
    const recorded = await recordDelivery(trx, [{ line, report: { asOf: new Date().toISOString(), days } }], { kind: 'supplier' });
    await settleDelivery(trx, line.lineId, SYSTEM.actorId);
    return recorded;
  });
}

/**
 * A funded live booking on `live-ctv` in March 2099 whose lines delivered `spends` (one day each
 * per amount, from March 1st), then March made final by the seller's window: its invoice may be
 * matched. Lines carry a seller reference `buy-<n>/pkg-<n>`.
 */
export async function finalMarch(env: TestEnv, org: string, budgets: number[], spends: number[][]) {
  return finalMonth(env, org, budgets, spends, { period: '2099-03', seller: 'live-ctv' });
}

/** As `finalMarch`, for a flight of another month and another seller (a live one on ctv): the month made final by its window. */
export async function finalMonth(env: TestEnv, org: string, budgets: number[], spends: number[][], at: { period: string; seller: string }) {
  await fundWallet(env, org, 1_000_000);
  const { bookingId, lineIds } = await liveBooking(
    env,
    org,
    budgets,
    budgets.reduce((s, b) => s + b, 0),
  );
  const last = lastDayOfPeriod(at.period);
  if (at.period !== '2099-03') {
    const booking = await env.db('bookings').where({ id: bookingId }).first('campaign_id');
    await env
      .db('campaigns')
      .where({ id: booking.campaign_id })
      .update({ start_date: `${at.period}-01`, end_date: last });
  }
  await env.db('booking_lines').whereIn('id', lineIds).update({ adapter_key: at.seller });
  await confirmLines(env, bookingId, lineIds);
  for (const [i, lineId] of lineIds.entries()) {
    await env
      .db('booking_lines')
      .where({ id: lineId })
      .update({ provider_reference: `buy-${i + 1}/pkg-${i + 1}` });
    const days = (spends[i] ?? []).map((s, d) => day(`${at.period}-${String(d + 1).padStart(2, '0')}`, s, s * 10));
    await deliver(env, { lineId, bookingId, advertiserId: org }, days);
  }
  // Ten days after the month: past a 72-hour window (April 10th for March 2099).
  await settleFinality(env.db, at.seller, 72, { real: new Date(`${addDays(last, 10)}T00:00:00Z`) });
  return { bookingId, lineIds };
}

export const invoiceBody = (lines: Array<Record<string, unknown>>, over: Record<string, unknown> = {}) => ({
  invoiceNumber: `INV-${randomUUID().slice(0, 8)}`,
  seller: 'live-ctv',
  period: '2099-03',
  currency: 'GBP',
  lines,
  ...over,
});

/** POSTs an invoice as JSON (or any body and content type), with an Idempotency-Key unless told not to. */
export function postInvoice(
  api: ApiClient,
  token: string,
  body: unknown,
  opts: { key?: string | null; contentType?: string } = {},
): Promise<Response> {
  const headers: Record<string, string> = { 'content-type': opts.contentType ?? 'application/json' };
  if (opts.key !== null) headers['idempotency-key'] = opts.key ?? randomUUID();
  return api.fetch('/api/v1/billing/invoices', {
    method: 'POST',
    token,
    headers,
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
}

/** Everything reconciliation could change for a workspace: what a refusal must leave as it was. */
export async function snapshot(env: TestEnv, org: string) {
  const count = async (table: string, column = 'advertiser_id') => Number((await env.db(table).where(column, org).count({ n: '*' }))[0]!.n);
  const { wallet, consistent } = await walletAndLedger(env, org);
  return {
    invoices: await count('invoices'),
    invoiceLines: await count('invoice_lines'),
    makegoods: await count('makegoods'),
    entries: await count('wallet_entries'),
    events: await count('webhook_events', 'workspace_id'),
    lineStates: await env.db('invoice_lines').where({ advertiser_id: org }).orderBy('id').select('id', 'status', 'version', 'remedy'),
    wallet,
    consistent,
  };
}
