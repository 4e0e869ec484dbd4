import { adcpSdk } from '../../../shared/adapters/adcp/sdk';
import type { AdapterContext, BookingOutcome, BookingRequest, PendingTask, TaskOutcome } from '../../../shared/adapters/adapter';
import { UnknownOutcome } from '../../../shared/adapters/adapter';
import { sellerAccountOf, type SellerAccount } from '../../../shared/adapters/credentials';
import { SellerUnreachable, type AdcpSellerConnection } from '../../../shared/adapters/adcp/connection';
import { taskVerdict, verdictOf, type TaskReport } from '../../../shared/adapters/adcp/outcomes';
import { RESEND_DELAYS_MS, sendChange, waitToResend } from './resend';
import { accountRef } from '../../../shared/adapters/adcp/account-ref';
import type { PushNotificationConfig } from '../../../shared/adapters/adcp/webhook-auth';
import { AccountNotReady, accountNames, keepAccountName } from '../../../shared/adapters/adcp/accounts';
import { BOOKING_CURRENCY, PriceNotListed, pricingOptionCurrency } from '../../../shared/adapters/adcp/products';

export interface BookingDeps {
  /** How the seller may push the outcome of a booking or change it finishes later (its push_notification_config); none means polling only. */
  pushNotification?: (ctx: AdapterContext) => Promise<PushNotificationConfig | null>;
}

/** Noon UTC would move with time zones; a flight runs from its first day's start to its last day's end. */
const flightTimes = (r: Pick<BookingRequest, 'startDate' | 'endDate'>) => {
  const end = new Date(`${r.endDate}T00:00:00Z`);
  end.setUTCDate(end.getUTCDate() + 1);
  return { start_time: `${r.startDate}T00:00:00Z`, end_time: end.toISOString().replace('.000Z', 'Z') };
};

/** The create_media_buy body for one line: built only from the attempt, so a resend is byte for byte the same. */
export function mediaBuyRequest(request: BookingRequest, account: SellerAccount, push: PushNotificationConfig | null) {
  const product = request.supplierProduct!;
  return {
    idempotency_key: request.attemptId,
    account: accountRef(account, request.executionMode),
    brand: { domain: account.brand.domain },
    ...flightTimes(request),
    packages: [
      {
        product_id: product.productId,
        pricing_option_id: product.pricingOptionId,
        budget: request.budgetMinor / 100,
        buyer_ref: request.lineId,
      },
    ],
    ...(push ? { push_notification_config: push } : {}),
  };
}

async function advertiserOf(ctx: AdapterContext, bookingId: string): Promise<string | null> {
  const row = (await ctx.db('bookings').where({ id: bookingId }).first('advertiser_id')) as { advertiser_id: string } | undefined;
  return row?.advertiser_id ?? null;
}

/**
 * Why the line's price cannot be booked in pounds, or null when it can. The budget is sent as
 * budgetMinor / 100 in the pricing option's currency: pounds sent as dollars would buy another
 * amount, so the option's currency is read from the seller right before the booking is sent.
 * A seller that cannot be reached is asked again (nothing was sent); one that still cannot, or
 * that fails to answer, leaves the outcome to a person (UnknownOutcome), having sent nothing.
 */
async function currencyCheck(
  connection: AdcpSellerConnection,
  request: BookingRequest,
  accounts: readonly SellerAccount[],
  ctx: AdapterContext,
): Promise<{ refusal: string } | { account: SellerAccount }> {
  const { productId, pricingOptionId } = request.supplierProduct!;
  for (let attempt = 0; ; attempt++) {
    try {
      const { currency, account } = await pricingOptionCurrency(
        connection,
        { accounts, mode: request.executionMode, productId, pricingOptionId },
        ctx.cut,
      );
      if (currency === null)
        return { refusal: `The seller no longer lists pricing option ${pricingOptionId} of product ${productId}; nothing was sent.` };
      if (currency.toUpperCase() !== BOOKING_CURRENCY) {
        return {
          refusal: `Product ${productId} is priced in ${currency} (pricing option ${pricingOptionId}); Flightdeck budgets are in ${BOOKING_CURRENCY}, so nothing was sent.`,
        };
      }
      return { account };
    } catch (err) {
      if (err instanceof PriceNotListed)
        return { refusal: `${err.message}, so the price's currency could not be checked; nothing was sent.` };
      const delay = RESEND_DELAYS_MS[attempt];
      if (!(err instanceof SellerUnreachable) || delay === undefined || !(await waitToResend(delay, ctx.signal))) {
        throw new UnknownOutcome(`${(err as Error).message} The price's currency could not be checked; nothing was sent.`);
      }
    }
  }
}

/**
 * Books one line as one media buy. Refuses, before anything is sent, a line whose mode is not the
 * seller's (a sandbox booking never reaches a live seller, nor the reverse), a line naming no
 * product, a workspace without an account on the seller, and a price not in pounds. Sends the
 * same body under the same key again only as the resend rule says (sendChange).
 */
export function adcpBook(connection: AdcpSellerConnection, deps: BookingDeps = {}) {
  return async (request: BookingRequest, ctx: AdapterContext): Promise<BookingOutcome> => {
    const sellerMode = connection.mode;
    if (request.executionMode !== sellerMode) {
      return {
        kind: 'rejected',
        reason: `${connection.adapterKey} takes ${sellerMode} bookings only; this ${request.executionMode} line was not sent.`,
      };
    }
    if (!request.supplierProduct) return { kind: 'rejected', reason: 'The line names no product of the seller; nothing was sent.' };
    const advertiserId = await advertiserOf(ctx, request.bookingId);
    const recorded = advertiserId ? await sellerAccountOf(ctx.db, connection.adapterKey, advertiserId) : null;
    if (!advertiserId || !recorded) {
      return { kind: 'rejected', reason: `The workspace has no approved account on ${connection.adapterKey}; nothing was sent.` };
    }
    let names: SellerAccount[];
    try {
      names = await accountNames(connection, recorded, request.executionMode, ctx.cut);
    } catch (err) {
      if (err instanceof AccountNotReady) return { kind: 'rejected', reason: err.message };
      throw err;
    }
    // The currency check also finds how the seller knows the account, before anything is sent.
    const checked = await currencyCheck(connection, request, names, ctx);
    if ('refusal' in checked) return { kind: 'rejected', reason: checked.refusal };
    const { account } = checked;
    await keepAccountName(ctx.db, connection.adapterKey, advertiserId, recorded, account);
    const body = mediaBuyRequest(request, account, (await deps.pushNotification?.(ctx)) ?? null);
    try {
      return await sendChange(
        connection,
        ctx,
        (c) => c.createMediaBuy(body as never),
        (result, sent) => {
          const verdict = verdictOf(result);
          // A rejection of a booking sent again after its first answer was lost is not the seller's word
          // that nothing was booked: the first send may have made a buy (a seller that kept no answer
          // refuses the resend as a duplicate). A person reconciles it.
          if (sent.afterLoss && verdict.kind === 'outcome' && verdict.outcome.kind === 'rejected') {
            throw new UnknownOutcome(
              `The booking's first answer was lost and the seller rejected it when sent again (${verdict.outcome.reason}); the first may have made a buy.`,
            );
          }
          // Nor is a busy seller's "nothing for now": once resending is over, whether the first made a buy is not known.
          return sent.afterLoss && verdict.kind === 'resend' ? { ...verdict, refusal: null } : verdict;
        },
      );
    } catch (err) {
      // Never reached, however often tried: still a booking the line cannot count on; a person looks.
      if (err instanceof SellerUnreachable) throw new UnknownOutcome(err.message);
      throw err;
    }
  };
}

/** What the seller says of one of its tasks now (AdCP tasks/get). Throws when it cannot be asked. */
export async function taskReport(connection: AdcpSellerConnection, taskId: string): Promise<TaskReport> {
  const { TaskExecutor } = await adcpSdk();
  const executor = new TaskExecutor({ agentId: connection.adapterKey });
  try {
    return { ...(await connection.withClient((client) => executor.getTaskStatus(client.getAgent(), taskId))), taskId };
  } catch (err) {
    throw new Error(`${connection.adapterKey} could not be asked about task ${taskId}: ${(err as Error).message}`, { cause: err });
  }
}

/** Asks the seller about a booking it is still working on (AdCP tasks/get). */
export function adcpTaskPoll(connection: AdcpSellerConnection) {
  return async (task: PendingTask): Promise<TaskOutcome> => {
    const info = await taskReport(connection, task.taskId);
    const outcome = taskVerdict(info);
    if (!outcome) throw new UnknownOutcome(`The seller reports task ${task.taskId} as ${info.status}.`);
    return outcome;
  };
}
