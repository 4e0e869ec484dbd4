import type { SupplierAdapter } from '../../../shared/adapters/adapter';
import type { AdapterDescriptor } from '../../../shared/adapters/catalogue';
import type { AdcpSellerConnection } from '../../../shared/adapters/adcp/connection';
import { adcpBook, adcpTaskPoll, type BookingDeps } from './book';
import { adcpOperationTaskPoll, adcpOperations } from './in-flight';
import { adcpReporter } from './delivery';
import { adcpReviewer, type ReviewDeps } from './review';

/**
 * An AdCP seller as a supplier adapter: one media buy per line (each line's attempt id its
 * idempotency_key), in-flight changes as update_media_buy read back for drift, bookings and
 * changes the seller finishes later polled through tasks/get, delivery from get_media_buy_delivery.
 */
export function adcpAdapter(
  descriptor: AdapterDescriptor,
  connection: AdcpSellerConnection,
  deps: BookingDeps & ReviewDeps = {},
): SupplierAdapter {
  return {
    descriptor,
    callsSupplier: true,
    operations: { book: adcpBook(connection, deps), ...adcpOperations(connection, deps) },
    tasks: { poll: adcpTaskPoll(connection), pollOperation: adcpOperationTaskPoll(connection) },
    reporter: adcpReporter(connection),
    reviewer: adcpReviewer(connection, deps),
  };
}
