import type { BookingOutcome, LineOperationOutcome, SupplierAdapter } from '../../shared/adapters/adapter';
import type { AdapterDescriptor } from '../../shared/adapters/catalogue';

/**
 * Live supplier adapters. Launch refuses live lines without approved supplier access (422),
 * and this deployment has no live supplier connection configured, so a live line that
 * reaches a worker is refused definitively before anything is sent: nothing can have been bought.
 */
export function liveAdapter(descriptor: AdapterDescriptor): SupplierAdapter {
  const reason = `No live connection to ${descriptor.key} is configured in this deployment; nothing was sent to the supplier.`;
  const refused = async (): Promise<LineOperationOutcome> => ({ kind: 'refused', reason });
  return {
    descriptor,
    callsSupplier: false,
    operations: {
      book: async (): Promise<BookingOutcome> => ({ kind: 'rejected', reason }),
      pause: refused,
      resume: refused,
      stop: refused,
      'change-budget': refused,
    },
  };
}
