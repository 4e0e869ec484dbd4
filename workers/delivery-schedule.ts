import type { Queue } from 'bullmq';
import type { SupplierAdapter } from '../shared/adapters/adapter';
import { POLL_DELIVERY } from '../shared/queues/jobs';
import { adapterKeyOfQueue } from '../shared/queues/names';

/**
 * Registers the delivery poll on each supplier queue among `queues` whose supplier, as this
 * deployment built it (AdCP sellers with their connections), reports delivery; workflow
 * suppliers' figures are entered by staff. A job scheduler is one per queue however many
 * processes register it, and the job runs on whichever consumer takes it.
 */
export async function scheduleDeliveryPolls(
  queues: readonly string[],
  implementations: ReadonlyMap<string, SupplierAdapter>,
  queueFor: (name: string) => Queue,
  everyMs: number,
): Promise<string[]> {
  const scheduled: string[] = [];
  for (const queue of queues) {
    if (!queue.startsWith('supplier.')) continue;
    if (!implementations.get(adapterKeyOfQueue(queue) ?? '')?.reporter) continue;
    await queueFor(queue).upsertJobScheduler(
      POLL_DELIVERY,
      { every: everyMs },
      { name: POLL_DELIVERY, data: {}, opts: { removeOnComplete: 100, removeOnFail: 100, attempts: 1 } },
    );
    scheduled.push(queue);
  }
  return scheduled;
}
