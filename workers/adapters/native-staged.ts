import type { AdapterContext, BookingOutcome, BookingRequest, SupplierAdapter } from '../../shared/adapters/adapter';
import type { AdapterDescriptor } from '../../shared/adapters/catalogue';
import { recordReceipt, supplierNow } from './sandbox-ledger';
import { sandboxOperations } from './sandbox';

/**
 * A supplier whose API creates campaigns paused. The line stays stopped after launch until
 * approved configuration and creative evidence allow enabling it; enabling is its resume.
 */
export function nativeStagedAdapter(descriptor: AdapterDescriptor): SupplierAdapter {
  return {
    descriptor,
    callsSupplier: true,
    operations: { ...sandboxOperations(descriptor.key), book: createPaused(descriptor) },
  };
}

/** Creates the line's campaign paused at the supplier: the line is staged, not running. */
function createPaused(descriptor: AdapterDescriptor) {
  return async (request: BookingRequest, ctx: AdapterContext): Promise<BookingOutcome> => {
    const reference = `staged-${request.attemptId.slice(-12)}`;
    await recordReceipt(ctx.db, {
      adapterKey: descriptor.key,
      operation: 'create-paused',
      idempotencyKey: request.attemptId,
      lineId: request.lineId,
      request,
      outcome: 'staged',
      providerReference: reference,
      effectiveAt: ctx.now ?? (await supplierNow(ctx.db, request.lineId, request.executionMode)),
    });
    return { kind: 'staged', providerReference: reference };
  };
}
