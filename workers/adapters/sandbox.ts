import type { AdapterContext, BookingOutcome, BookingRequest, SupplierAdapter } from '../../shared/adapters/adapter';
import { UnknownOutcome } from '../../shared/adapters/adapter';
import type { AdapterDescriptor } from '../../shared/adapters/catalogue';
import { recordReceipt } from './sandbox-ledger';

/**
 * Deterministic sandbox suppliers, one per channel. Like a payment provider's test card
 * numbers, the last two digits of a line's budgetMinor pick the outcome (docs/bookings.md, Sandbox triggers):
 *   …91 rejected · …92 unknown outcome (received, answer lost) · …93 slow, then confirmed · anything else confirmed.
 */
export const SANDBOX_TRIGGERS = { rejected: 91, unknown: 92, slow: 93 } as const;

export type SandboxBehaviour = 'confirmed' | 'rejected' | 'unknown' | 'slow';

export function sandboxBehaviour(budgetMinor: number): SandboxBehaviour {
  switch (budgetMinor % 100) {
    case SANDBOX_TRIGGERS.rejected:
      return 'rejected';
    case SANDBOX_TRIGGERS.unknown:
      return 'unknown';
    case SANDBOX_TRIGGERS.slow:
      return 'slow';
    default:
      return 'confirmed';
  }
}

export function sandboxAdapter(descriptor: AdapterDescriptor): SupplierAdapter {
  return {
    descriptor,
    callsSupplier: true,
    async book(request: BookingRequest, ctx: AdapterContext): Promise<BookingOutcome> {
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
    },
  };
}
