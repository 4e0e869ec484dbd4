import type { Queue } from 'bullmq';
import { POLL_DELIVERY } from '../shared/queues/jobs';
import { adapterKeyOfQueue } from '../shared/queues/names';
import { ADAPTER_IMPLEMENTATIONS } from './adapters/registry';

/**
 * Registers the delivery poll on each supplier queue among `queues` whose supplier reports
 * delivery (workflow suppliers' figures are entered by staff). A job scheduler is one per queue
 * however many processes register it, and the job runs on whichever consumer takes it.
 */
export async function scheduleDeliveryPolls(queues: readonly string[], queueFor: (name: string) => Queue, everyMs: number): Promise<void> {
  for (const queue of queues) {
    if (!queue.startsWith('supplier.')) continue;
    if (!ADAPTER_IMPLEMENTATIONS.get(adapterKeyOfQueue(queue) ?? '')?.reporter) continue;
    await queueFor(queue).upsertJobScheduler(
      POLL_DELIVERY,
      { every: everyMs },
      { name: POLL_DELIVERY, data: {}, opts: { removeOnComplete: 100, removeOnFail: 100, attempts: 1 } },
    );
  }
}
