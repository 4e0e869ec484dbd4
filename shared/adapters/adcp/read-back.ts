import type { Knex } from 'knex';
import type { AdapterContext, BudgetChangeRequest, LineOperationOutcome, LineOperationRequest, OperationTaskOutcome } from '../adapter';
import { sellerAccountOf, type SellerAccount } from '../credentials';
import { accountRef } from './account-ref';
import type { AdcpSellerConnection } from './connection';
import { parseAdcpReference } from './outcomes';
import { RESEND_DELAYS_MS, waitToResend } from './resend-waits';

/**
 * What a change the seller says it carried out looks like at the seller: the buy read back
 * (get_media_buys) and compared with what was asked, whether the seller answered at once, or
 * finished the change later and said so to a poll or by webhook.
 */

/** An in-flight operation as AdCP names it. */
export type Operation = 'pause' | 'resume' | 'stop' | 'change-budget';

/** What the seller shows of a package after a change: compared with what was asked. */
interface ReadBack {
  status: string | null;
  paused: boolean | null;
  budget: number | null;
}

/** Where the seller's read-back differs from what the change asked for; empty when it agrees. */
export function driftOf(op: Operation | 'pause-for-stop', request: LineOperationRequest | BudgetChangeRequest, seen: ReadBack): string[] {
  const drift: string[] = [];
  if ((op === 'pause' || op === 'pause-for-stop') && seen.paused !== true && seen.status !== 'paused')
    drift.push(`asked to pause; the seller shows ${seen.status ?? 'no status'}`);
  if (op === 'resume' && (seen.paused === true || seen.status === 'paused'))
    drift.push('asked to resume; the seller still shows it paused');
  if (op === 'stop' && seen.status !== 'canceled' && seen.status !== 'completed')
    drift.push(`asked to stop; the seller shows ${seen.status ?? 'no status'}`);
  if (op === 'change-budget') {
    const wanted = (request as BudgetChangeRequest).newBudgetMinor / 100;
    if (seen.budget !== wanted) drift.push(`asked for a budget of ${wanted}; the seller shows ${seen.budget ?? 'none'}`);
  }
  return drift;
}

/** The workspace's account on the seller, for the line's booking. */
export async function lineAccount(db: Knex, adapterKey: string, bookingId: string): Promise<SellerAccount | null> {
  const row = (await db('bookings').where({ id: bookingId }).first('advertiser_id')) as { advertiser_id: string } | undefined;
  return row ? sellerAccountOf(db, adapterKey, row.advertiser_id) : null;
}

interface PackageStatus {
  package_id?: string;
  budget?: number;
  paused?: boolean;
  status?: string;
}

/** Reads the buy back (get_media_buys): the line's package as the seller now shows it. */
async function readBack(
  connection: AdcpSellerConnection,
  account: SellerAccount,
  mode: 'sandbox' | 'live',
  mediaBuyId: string,
  packageId: string | null,
  signal?: AbortSignal,
): Promise<ReadBack> {
  const result = await connection.call(
    (c) => c.getMediaBuys({ account: accountRef(account, mode), media_buy_ids: [mediaBuyId] } as never),
    { signal },
  );
  if (result.status !== 'completed') throw new Error(`get_media_buys answered ${result.status}`);
  const buy = (
    result.data as { media_buys?: Array<{ media_buy_id: string; status?: string; packages?: PackageStatus[] }> }
  ).media_buys?.find((b) => b.media_buy_id === mediaBuyId);
  const pkg = buy?.packages?.find((p) => p.package_id === packageId) ?? buy?.packages?.[0];
  return {
    status: buy?.status ?? null,
    paused: typeof pkg?.paused === 'boolean' ? pkg.paused : null,
    budget: typeof pkg?.budget === 'number' ? pkg.budget : null,
  };
}

/** What is sent for an operation: a stop is sent as a pause to a seller that does not carry out cancels (Prebid's Sales Agent). */
export const sentAs = (connection: AdcpSellerConnection, asked: Operation) =>
  asked === 'stop' && !connection.seller.honoursCancel ? ('pause-for-stop' as const) : asked;

/**
 * A change the seller says it carried out (at once, or when its task completed): the buy is read
 * back and any difference from what was asked is kept with the outcome as drift, for a person to
 * look at, with what a person must still do at the seller. A read changes nothing, so it is asked
 * again once; one that still fails is no evidence either way (it is kept as such), and the change
 * is proven by delivery alone.
 */
export async function appliedAfterReadBack(
  connection: AdcpSellerConnection,
  asked: Operation,
  request: LineOperationRequest | BudgetChangeRequest,
  account: SellerAccount,
  time: Pick<AdapterContext, 'signal' | 'cut'> = {},
): Promise<Extract<LineOperationOutcome, { kind: 'applied' }>> {
  const op = sentAs(connection, asked);
  const { mediaBuyId, packageId } = parseAdcpReference(request.providerReference!);
  let seen: ReadBack | null = null;
  let readBackError: string | null = null;
  for (const delay of [0, RESEND_DELAYS_MS[1]!]) {
    if (delay && !(await waitToResend(delay, time.signal))) break;
    try {
      seen = await readBack(connection, account, request.executionMode, mediaBuyId, packageId, time.cut);
      break;
    } catch (err) {
      readBackError = `the buy could not be read back: ${(err as Error).message}`;
    }
  }
  const drift = seen ? driftOf(op, request, seen) : [];
  const followUp =
    op === 'pause-for-stop'
      ? `${connection.adapterKey} does not carry out cancels: the buy is paused there. End media buy ${mediaBuyId} at the seller by hand.`
      : asked === 'change-budget' && !connection.seller.appliesFlightChanges
        ? `${connection.adapterKey} records budget and end-date changes without applying them to its ad server: make the change there by hand.`
        : null;
  return {
    kind: 'applied',
    providerReference: request.providerReference,
    detail: { readBack: seen, drift, ...(seen ? {} : { readBackError }), ...(followUp ? { followUp } : {}) },
  };
}

/**
 * A change the seller finished later (its task polled, or pushed by webhook): an applied answer is
 * read back as an answer at once is; any other answer is as it came.
 */
export async function readBackTaskAnswer(
  connection: AdcpSellerConnection,
  db: Knex,
  task: { bookingId: string; kind: Operation; request: LineOperationRequest | BudgetChangeRequest },
  outcome: OperationTaskOutcome,
): Promise<OperationTaskOutcome> {
  if (outcome.kind !== 'applied') return outcome;
  const account = await lineAccount(db, connection.adapterKey, task.bookingId);
  // The account was there when the change was sent; without it now, the buy cannot be read back: no evidence either way.
  if (!account) {
    const readBackError = `the buy could not be read back: the workspace has no approved account on ${connection.adapterKey} now`;
    return { kind: 'applied', providerReference: task.request.providerReference, detail: { readBack: null, drift: [], readBackError } };
  }
  return appliedAfterReadBack(connection, task.kind, task.request, account);
}
