import type { TaskResult } from '@adcp/sdk';
import type {
  AdapterContext,
  BudgetChangeRequest,
  LineOperationOutcome,
  LineOperationRequest,
  SupplierAdapter,
} from '../../../shared/adapters/adapter';
import { UnknownOutcome } from '../../../shared/adapters/adapter';
import { sellerAccountOf, type SellerAccount } from '../../../shared/adapters/credentials';
import { accountRef } from '../../../shared/adapters/adcp/account-ref';
import { SellerUnreachable, type AdcpSellerConnection } from '../../../shared/adapters/adcp/connection';
import { failedVerdict, parseAdcpReference, type AnswerVerdict } from '../../../shared/adapters/adcp/outcomes';
import { RESEND_DELAYS_MS, sendChange, waitToResend } from './resend';

type Operation = 'pause' | 'resume' | 'stop' | 'change-budget';
type Refused = Extract<LineOperationOutcome, { kind: 'refused' }>;

/** What the seller shows of a package after a change: compared with what was asked. */
interface ReadBack {
  status: string | null;
  paused: boolean | null;
  budget: number | null;
}

const endTimeOf = (date: string) => {
  const end = new Date(`${date}T00:00:00Z`);
  end.setUTCDate(end.getUTCDate() + 1);
  return end.toISOString().replace('.000Z', 'Z');
};

/** The update_media_buy body for an operation on one line's package. */
export function updateRequest(
  op: Operation | 'pause-for-stop',
  request: LineOperationRequest | BudgetChangeRequest,
  account: SellerAccount,
  mediaBuyId: string,
  packageId: string | null,
) {
  const base = { idempotency_key: request.attemptId, account: accountRef(account, request.executionMode), media_buy_id: mediaBuyId };
  switch (op) {
    case 'pause':
    case 'pause-for-stop':
    case 'resume':
      return { ...base, paused: op !== 'resume' };
    case 'stop':
      // One buy per line: ending the line cancels its buy.
      return { ...base, canceled: true as const, cancellation_reason: 'Stopped by the buyer in Flightdeck.' };
    case 'change-budget': {
      const change = request as BudgetChangeRequest;
      return {
        ...base,
        packages: [{ package_id: packageId!, budget: change.newBudgetMinor / 100 }],
        ...(change.newEndDate ? { end_time: endTimeOf(change.newEndDate) } : {}),
      };
    }
  }
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

async function lineAccount(ctx: AdapterContext, adapterKey: string, bookingId: string): Promise<SellerAccount | null> {
  const row = (await ctx.db('bookings').where({ id: bookingId }).first('advertiser_id')) as { advertiser_id: string } | undefined;
  return row ? sellerAccountOf(ctx.db, adapterKey, row.advertiser_id) : null;
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

/**
 * Pause, resume, stop and budget changes as update_media_buy on the line's own buy, keyed by the
 * operation's attempt id; then the buy is read back and any difference from what was asked is
 * kept with the outcome as drift (and logged), for a person to look at.
 */
export function adcpOperation(connection: AdcpSellerConnection, asked: Operation) {
  // A seller that does not carry out cancels (Prebid's Sales Agent) is asked to pause instead: a
  // pause it does apply, proven by its delivery like any stop, and a person ends the buy there.
  const op = asked === 'stop' && !connection.seller.honoursCancel ? 'pause-for-stop' : asked;
  return async (request: LineOperationRequest | BudgetChangeRequest, ctx: AdapterContext): Promise<LineOperationOutcome> => {
    if (!request.providerReference) return { kind: 'refused', reason: 'The line has no media buy at the seller; nothing was sent.' };
    const account = await lineAccount(ctx, connection.adapterKey, request.bookingId);
    if (!account)
      return { kind: 'refused', reason: `The workspace has no approved account on ${connection.adapterKey}; nothing was sent.` };
    const { mediaBuyId, packageId } = parseAdcpReference(request.providerReference);
    if (op === 'change-budget' && !packageId)
      return { kind: 'refused', reason: 'The line names no package at the seller; nothing was sent.' };
    let result: TaskResult<unknown> | Refused;
    try {
      result = await sendChange(
        connection,
        ctx,
        (c) => c.updateMediaBuy(updateRequest(op, request, account, mediaBuyId, packageId) as never),
        (answer): AnswerVerdict<TaskResult<unknown> | Refused> =>
          answer.status === 'failed'
            ? failedVerdict(answer, (reason) => ({ kind: 'refused', reason }))
            : { kind: 'outcome', outcome: answer },
      );
    } catch (err) {
      if (err instanceof SellerUnreachable) return { kind: 'refused', reason: err.message };
      if (err instanceof UnknownOutcome) throw new UnknownOutcome(`The ${asked}: ${err.message}`);
      throw err;
    }
    if ('kind' in result) return result;
    if (result.status !== 'completed') {
      // AdCP's update_media_buy answers success or error only; a seller still working on it (or
      // asking for input) is off the protocol's path, with no task we could follow. Whether the
      // change will happen is not known: a person reconciles it, with the seller's task id.
      const task = result.submitted?.taskId ?? result.metadata?.serverTaskId ?? result.metadata?.taskId;
      throw new UnknownOutcome(
        `The seller answered the ${asked} ${result.status}${task ? ` (its task ${task})` : ''}; update_media_buy has no such answer, so whether it will be done is not known.`,
      );
    }
    const errors = (result.data as { errors?: Array<{ code?: string; message?: string }> }).errors;
    if (errors?.length) return { kind: 'refused', reason: errors.map((e) => `${e.code}: ${e.message}`).join('; ') };
    // A read changes nothing, so it is asked again once; one that still fails is no evidence either
    // way (it is kept as such), and the change is proven by delivery alone.
    let seen: ReadBack | null = null;
    let readBackError: string | null = null;
    for (const delay of [0, RESEND_DELAYS_MS[1]!]) {
      if (delay && !(await waitToResend(delay, ctx.signal))) break;
      try {
        seen = await readBack(connection, account, request.executionMode, mediaBuyId, packageId, ctx.cut);
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
  };
}

export function adcpOperations(connection: AdcpSellerConnection): Pick<SupplierAdapter, 'pause' | 'resume' | 'stop' | 'changeBudget'> {
  return {
    pause: adcpOperation(connection, 'pause'),
    resume: adcpOperation(connection, 'resume'),
    stop: adcpOperation(connection, 'stop'),
    changeBudget: adcpOperation(connection, 'change-budget') as SupplierAdapter['changeBudget'],
  };
}
