import type {
  AdapterContext,
  BookingOutcome,
  BookingRequest,
  BudgetChangeRequest,
  InFlightOperations,
  LineOperationOutcome,
  LineOperationRequest,
  SupplierAdapter,
} from '../../shared/adapters/adapter';
import { UnknownOutcome } from '../../shared/adapters/adapter';
import type { AdapterDescriptor } from '../../shared/adapters/catalogue';
import { recordReceipt, supplierNow } from './sandbox-ledger';

/**
 * Deterministic sandbox suppliers, one per channel. Like a payment provider's test card
 * numbers, the last two digits of a figure pick the outcome (docs/bookings.md, Sandbox triggers):
 *   …91 refused · …92 unknown outcome (received, answer lost) · …93 slow, then done · anything else done.
 * A booking reads them from the line's budget, a budget change from the new budget. Pause, resume
 * and stop read the line's budget too, from digits that book normally: …81 refused, …82 unknown, …83 slow.
 */
export const SANDBOX_TRIGGERS = { rejected: 91, unknown: 92, slow: 93 } as const;
export const SANDBOX_OPERATION_TRIGGERS = { rejected: 81, unknown: 82, slow: 83 } as const;

export type SandboxBehaviour = 'confirmed' | 'rejected' | 'unknown' | 'slow';

export function sandboxBehaviour(
  amountMinor: number,
  triggers: Record<Exclude<SandboxBehaviour, 'confirmed'>, number> = SANDBOX_TRIGGERS,
): SandboxBehaviour {
  switch (amountMinor % 100) {
    case triggers.rejected:
      return 'rejected';
    case triggers.unknown:
      return 'unknown';
    case triggers.slow:
      return 'slow';
    default:
      return 'confirmed';
  }
}

type OperationName = 'pause' | 'resume' | 'stop' | 'change-budget';

/**
 * A sandbox supplier's pause, resume, stop or budget change: recorded in its ledger under the
 * attempt id, then done, refused, lost or slow as the trigger says.
 */
export function sandboxOperation(adapterKey: string, name: OperationName, behaviourOf: (r: LineOperationRequest) => SandboxBehaviour) {
  return async (request: LineOperationRequest | BudgetChangeRequest, ctx: AdapterContext): Promise<LineOperationOutcome> => {
    const behaviour = behaviourOf(request);
    const reference = request.providerReference ?? `sbx-${adapterKey}-${(request.bookingAttemptId ?? request.attemptId).slice(-12)}`;
    await recordReceipt(ctx.db, {
      adapterKey,
      operation: name,
      idempotencyKey: request.attemptId,
      lineId: request.lineId,
      request,
      outcome: behaviour,
      providerReference: behaviour === 'rejected' ? null : reference,
      effectiveAt: ctx.now ?? (await supplierNow(ctx.db, request.lineId, request.executionMode)),
    });
    switch (behaviour) {
      case 'rejected':
        return { kind: 'refused', reason: `Sandbox supplier refused the ${name}: the campaign is locked for changes.` };
      case 'unknown':
        throw new UnknownOutcome(`Sandbox supplier received the ${name} but its answer was lost.`);
      case 'slow':
        await new Promise((r) => setTimeout(r, ctx.sandboxSlowMs));
        return { kind: 'applied', providerReference: reference };
      default:
        return { kind: 'applied', providerReference: reference };
    }
  };
}

/** The in-flight operations of a sandbox supplier (and of the native staged one, which is a sandbox too). */
export function sandboxOperations(adapterKey: string): InFlightOperations {
  const byLineBudget = (r: LineOperationRequest) => sandboxBehaviour(r.budgetMinor, SANDBOX_OPERATION_TRIGGERS);
  return {
    pause: sandboxOperation(adapterKey, 'pause', byLineBudget),
    resume: sandboxOperation(adapterKey, 'resume', byLineBudget),
    stop: sandboxOperation(adapterKey, 'stop', byLineBudget),
    'change-budget': sandboxOperation(adapterKey, 'change-budget', (r) => sandboxBehaviour((r as BudgetChangeRequest).newBudgetMinor)),
  };
}

export function sandboxAdapter(descriptor: AdapterDescriptor): SupplierAdapter {
  return {
    descriptor,
    callsSupplier: true,
    operations: { ...sandboxOperations(descriptor.key), book: sandboxBook(descriptor) },
  };
}

/** A sandbox booking: its outcome chosen by the line's budget (the sandbox triggers). */
function sandboxBook(descriptor: AdapterDescriptor) {
  return async (request: BookingRequest, ctx: AdapterContext): Promise<BookingOutcome> => {
    const behaviour = sandboxBehaviour(request.budgetMinor);
    const reference = `sbx-${descriptor.key}-${request.attemptId.slice(-12)}`;
    // The supplier receives the request before anything else happens, as a real one would.
    await recordReceipt(ctx.db, {
      adapterKey: descriptor.key,
      operation: 'book',
      idempotencyKey: request.attemptId,
      lineId: request.lineId,
      request,
      outcome: behaviour,
      providerReference: behaviour === 'rejected' ? null : reference,
      effectiveAt: ctx.now ?? (await supplierNow(ctx.db, request.lineId, request.executionMode)),
    });
    switch (behaviour) {
      case 'rejected':
        return { kind: 'rejected', reason: 'Sandbox supplier refused: inventory unavailable for the requested flight.' };
      case 'unknown':
        throw new UnknownOutcome('Sandbox supplier received the booking but its answer was lost.');
      case 'slow':
        await new Promise((r) => setTimeout(r, ctx.sandboxSlowMs));
        return { kind: 'confirmed', providerReference: reference };
      default:
        return { kind: 'confirmed', providerReference: reference };
    }
  };
}
