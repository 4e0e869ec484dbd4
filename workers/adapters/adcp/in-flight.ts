import type { TaskResult } from '@adcp/sdk';
import type {
  AdapterContext,
  BudgetChangeRequest,
  LineOperationOutcome,
  LineOperationRequest,
  OperationTaskOutcome,
  InFlightOperations,
  PendingOperationTask,
} from '../../../shared/adapters/adapter';
import { UnknownOutcome } from '../../../shared/adapters/adapter';
import type { SellerAccount } from '../../../shared/adapters/credentials';
import { accountRef } from '../../../shared/adapters/adcp/account-ref';
import { SellerUnreachable, type AdcpSellerConnection } from '../../../shared/adapters/adcp/connection';
import {
  failedVerdict,
  parseAdcpReference,
  updateErrors,
  updateTaskVerdict,
  type AnswerVerdict,
} from '../../../shared/adapters/adcp/outcomes';
import { appliedAfterReadBack, lineAccount, readBackTaskAnswer, sentAs, type Operation } from '../../../shared/adapters/adcp/read-back';
import type { PushNotificationConfig } from '../../../shared/adapters/adcp/webhook-auth';
import { taskReport, type BookingDeps } from './book';
import { sendChange } from './resend';

type Refused = Extract<LineOperationOutcome, { kind: 'refused' }>;

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

/**
 * Pause, resume, stop and budget changes as update_media_buy on the line's own buy, keyed by the
 * operation's attempt id and sent again only as the resend rule says; then the buy is read back
 * (appliedAfterReadBack). A seller still working on the change answers with its task, followed
 * until it finishes (adcpOperationTaskPoll).
 */
export function adcpOperation(connection: AdcpSellerConnection, asked: Operation, deps: BookingDeps = {}) {
  // A seller that does not carry out cancels (Prebid's Sales Agent) is asked to pause instead: a
  // pause it does apply, proven by its delivery like any stop, and a person ends the buy there.
  const op = sentAs(connection, asked);
  return async (request: LineOperationRequest | BudgetChangeRequest, ctx: AdapterContext): Promise<LineOperationOutcome> => {
    if (!request.providerReference) return { kind: 'refused', reason: 'The line has no media buy at the seller; nothing was sent.' };
    const account = await lineAccount(ctx.db, connection.adapterKey, request.bookingId);
    if (!account)
      return { kind: 'refused', reason: `The workspace has no approved account on ${connection.adapterKey}; nothing was sent.` };
    const { mediaBuyId, packageId } = parseAdcpReference(request.providerReference);
    if (op === 'change-budget' && !packageId)
      return { kind: 'refused', reason: 'The line names no package at the seller; nothing was sent.' };
    const push = (await deps.pushNotification?.(ctx)) ?? null;
    let result: TaskResult<unknown> | Refused;
    let afterLoss = false;
    try {
      result = await sendChange(
        connection,
        ctx,
        (c) => c.updateMediaBuy(updateRequest(op, request, account, mediaBuyId, packageId, push) as never),
        (answer, sent): AnswerVerdict<TaskResult<unknown> | Refused> => {
          afterLoss = sent.afterLoss;
          return answer.status === 'failed'
            ? failedVerdict(answer, (reason) => ({ kind: 'refused', reason }))
            : { kind: 'outcome', outcome: answer };
        },
      );
    } catch (err) {
      if (err instanceof SellerUnreachable) return { kind: 'refused', reason: err.message };
      if (err instanceof UnknownOutcome) throw new UnknownOutcome(`The ${asked}: ${err.message}`);
      throw err;
    }
    const refused = (refusal: Refused) =>
      afterLoss ? refusedAfterLoss(connection, asked, request, account, refusal, ctx) : Promise.resolve(refusal);
    if ('kind' in result) return refused(result);
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
    if (errors) return refused({ kind: 'refused', reason: errors });
    return appliedAfterReadBack(connection, asked, request, account, ctx);
  };
}

/**
 * A refusal of a change sent again after its first answer was lost is not the seller's word that
 * nothing was done: the first send may have done it (a seller whose idempotency layer keeps no
 * answer to a cancel carries the resend out again and refuses it, NOT_CANCELLABLE). The buy is
 * read back: showing the change, it was applied; showing none, the refusal stands; unreadable,
 * whether it was done is not known and a person reconciles the line.
 */
async function refusedAfterLoss(
  connection: AdcpSellerConnection,
  asked: Operation,
  request: LineOperationRequest | BudgetChangeRequest,
  account: SellerAccount,
  refusal: Refused,
  ctx: AdapterContext,
): Promise<LineOperationOutcome> {
  const applied = await appliedAfterReadBack(connection, asked, request, account, ctx);
  const { readBack, drift } = applied.detail as { readBack: unknown; drift: string[] };
  if (!readBack) {
    throw new UnknownOutcome(
      `The ${asked}'s first answer was lost and the seller refused it when sent again (${refusal.reason}); its buy could not be read back, so whether it was done is not known.`,
    );
  }
  if (drift.length) return refusal;
  return { ...applied, detail: { ...applied.detail, resendRefused: refusal.reason } };
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
    return readBackTaskAnswer(connection, ctx.db, task, outcome);
  };
}

export function adcpOperations(connection: AdcpSellerConnection, deps: BookingDeps = {}): InFlightOperations {
  return {
    pause: adcpOperation(connection, 'pause', deps),
    resume: adcpOperation(connection, 'resume', deps),
    stop: adcpOperation(connection, 'stop', deps),
    'change-budget': adcpOperation(connection, 'change-budget', deps),
  };
}
