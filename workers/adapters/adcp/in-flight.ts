import type { TaskResult } from '@adcp/sdk';
import type {
  AdapterContext,
  BudgetChangeRequest,
  LineOperationOutcome,
  LineOperationRequest,
  OperationTaskOutcome,
  PendingOperationTask,
  SupplierAdapter,
} from '../../../shared/adapters/adapter';
import { UnknownOutcome } from '../../../shared/adapters/adapter';
import { sellerAccountOf, type SellerAccount } from '../../../shared/adapters/credentials';
import { accountRef } from '../../../shared/adapters/adcp/account-ref';
import { SellerUnreachable, type AdcpSellerConnection } from '../../../shared/adapters/adcp/connection';
import { parseAdcpReference, updateErrors, updateTaskVerdict } from '../../../shared/adapters/adcp/outcomes';
import type { PushNotificationConfig } from '../../../shared/adapters/adcp/webhook-auth';
import { taskReport, type BookingDeps } from './book';

type Operation = 'pause' | 'resume' | 'stop' | 'change-budget';

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
  push: PushNotificationConfig | null = null,
) {
  const base = {
    idempotency_key: request.attemptId,
    account: accountRef(account, request.executionMode),
    media_buy_id: mediaBuyId,
    // Where the seller may push the outcome of a change it finishes later.
    ...(push ? { push_notification_config: push } : {}),
  };
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

/** What is sent for an operation: a stop is sent as a pause to a seller that does not carry out cancels (Prebid's Sales Agent). */
const sentAs = (connection: AdcpSellerConnection, asked: Operation) =>
  asked === 'stop' && !connection.seller.honoursCancel ? ('pause-for-stop' as const) : asked;

/**
 * A change the seller says it carried out (at once, or when its task completed): the buy is read
 * back and any difference from what was asked is kept with the outcome as drift, for a person to
 * look at, with what a person must still do at the seller.
 */
async function appliedAfterReadBack(
  connection: AdcpSellerConnection,
  asked: Operation,
  request: LineOperationRequest | BudgetChangeRequest,
  account: SellerAccount,
  signal?: AbortSignal,
): Promise<Extract<LineOperationOutcome, { kind: 'applied' }>> {
  const op = sentAs(connection, asked);
  const { mediaBuyId, packageId } = parseAdcpReference(request.providerReference!);
  let drift: string[];
  let seen: ReadBack | null = null;
  try {
    seen = await readBack(connection, account, request.executionMode, mediaBuyId, packageId, signal);
    drift = driftOf(op, request, seen);
  } catch (err) {
    drift = [`the buy could not be read back: ${(err as Error).message}`];
  }
  const followUp =
    op === 'pause-for-stop'
      ? `${connection.adapterKey} does not carry out cancels: the buy is paused there. End media buy ${mediaBuyId} at the seller by hand.`
      : asked === 'change-budget' && !connection.seller.appliesFlightChanges
        ? `${connection.adapterKey} records budget and end-date changes without applying them to its ad server: make the change there by hand.`
        : null;
  return {
    kind: 'applied',
    providerReference: request.providerReference,
    detail: { readBack: seen, drift, ...(followUp ? { followUp } : {}) },
  };
}

/**
 * Pause, resume, stop and budget changes as update_media_buy on the line's own buy, keyed by the
 * operation's attempt id; then the buy is read back (appliedAfterReadBack). A seller still working
 * on the change answers with its task, followed until it finishes (adcpOperationTaskPoll).
 */
export function adcpOperation(connection: AdcpSellerConnection, asked: Operation, deps: BookingDeps = {}) {
  // A seller that does not carry out cancels (Prebid's Sales Agent) is asked to pause instead: a
  // pause it does apply, proven by its delivery like any stop, and a person ends the buy there.
  const op = sentAs(connection, asked);
  return async (request: LineOperationRequest | BudgetChangeRequest, ctx: AdapterContext): Promise<LineOperationOutcome> => {
    if (!request.providerReference) return { kind: 'refused', reason: 'The line has no media buy at the seller; nothing was sent.' };
    const account = await lineAccount(ctx, connection.adapterKey, request.bookingId);
    if (!account)
      return { kind: 'refused', reason: `The workspace has no approved account on ${connection.adapterKey}; nothing was sent.` };
    const { mediaBuyId, packageId } = parseAdcpReference(request.providerReference);
    if (op === 'change-budget' && !packageId)
      return { kind: 'refused', reason: 'The line names no package at the seller; nothing was sent.' };
    const push = (await deps.pushNotification?.(ctx)) ?? null;
    let result: TaskResult<unknown>;
    try {
      result = (await connection.call((c) => c.updateMediaBuy(updateRequest(op, request, account, mediaBuyId, packageId, push) as never), {
        signal: ctx.cut,
      })) as TaskResult<unknown>;
    } catch (err) {
      if (err instanceof SellerUnreachable) return { kind: 'refused', reason: err.message };
      throw new UnknownOutcome(`The seller's answer to the ${asked} was lost: ${(err as Error).message}`);
    }
    if (result.status === 'failed') {
      if (!result.adcpError) throw new UnknownOutcome(`The seller's answer to the ${asked} was lost: ${result.error}`);
      return { kind: 'refused', reason: `${result.adcpError.code}: ${result.adcpError.message}` };
    }
    if (result.status !== 'completed') {
      // Still working on it, under a task of its own: followed like a booking's task. Without a
      // task id (or asking for input) there is nothing to follow, and whether the change will
      // happen is not known: a person reconciles it, with whatever the seller said.
      const task = result.submitted?.taskId ?? (result.data as { task_id?: string } | undefined)?.task_id ?? result.metadata?.serverTaskId;
      if ((result.status === 'submitted' || result.status === 'working') && task)
        return { kind: 'pending', taskId: task, supplierStatus: result.status };
      throw new UnknownOutcome(
        `The seller answered the ${asked} ${result.status}${task ? ` (its task ${task})` : ' with no task to follow'}, so whether it will be done is not known.`,
      );
    }
    const errors = updateErrors(result.data);
    if (errors) return { kind: 'refused', reason: errors };
    return appliedAfterReadBack(connection, asked, request, account, ctx.cut);
  };
}

/**
 * Asks the seller about a change it is still working on (AdCP tasks/get): its update_media_buy
 * result, once it has one, is the change's outcome, an applied one read back as an answer at once
 * would be. A task the seller cannot account for is unknown: a person reconciles it.
 */
export function adcpOperationTaskPoll(connection: AdcpSellerConnection) {
  return async (task: PendingOperationTask, ctx: AdapterContext): Promise<OperationTaskOutcome> => {
    const info = await taskReport(connection, task.taskId);
    const outcome = updateTaskVerdict(info);
    if (!outcome) throw new UnknownOutcome(`The seller reports the ${task.kind}'s task ${task.taskId} as ${info.status}.`);
    if (outcome.kind !== 'applied') return outcome;
    const account = await lineAccount(ctx, connection.adapterKey, task.bookingId);
    // The account was there when the change was sent; without it now, the buy cannot be read back.
    if (!account) return { kind: 'applied', providerReference: task.request.providerReference, detail: { readBack: null, drift: [] } };
    return appliedAfterReadBack(connection, task.kind, task.request, account);
  };
}

export function adcpOperations(
  connection: AdcpSellerConnection,
  deps: BookingDeps = {},
): Pick<SupplierAdapter, 'pause' | 'resume' | 'stop' | 'changeBudget'> {
  return {
    pause: adcpOperation(connection, 'pause', deps),
    resume: adcpOperation(connection, 'resume', deps),
    stop: adcpOperation(connection, 'stop', deps),
    changeBudget: adcpOperation(connection, 'change-budget', deps) as SupplierAdapter['changeBudget'],
  };
}
