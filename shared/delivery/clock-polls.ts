import type { Knex } from 'knex';
import { findAdapter } from '../adapters/catalogue';
import { deliveryPollMessage, type JobMessage } from '../queues/jobs';

/**
 * After a workspace's sandbox clock moves: a delivery poll for that workspace on each sandbox
 * supplier queue it has running lines on, so the days passed are delivered without waiting for
 * the next scheduled poll.
 */
export async function sandboxPollMessages(db: Knex, advertiserId: string, at = new Date()): Promise<JobMessage[]> {
  const rows = await db('booking_lines')
    .where({ advertiser_id: advertiserId, execution_mode: 'sandbox' })
    .where((w) => w.whereNotNull('confirmed_at').orWhere('status', 'confirmed'))
    .distinct('adapter_key');
  return (
    rows
      .map((r) => String(r.adapter_key))
      // Suppliers that report delivery themselves; a sandbox AdCP seller's own clock is its business,
      // but asking it now brings in whatever it has delivered by now.
      .filter((key) => {
        const kind = findAdapter(key)?.kind;
        return kind === 'sandbox' || kind === 'native-staged' || kind === 'adcp';
      })
      .map((key) => deliveryPollMessage(key, advertiserId, at))
  );
}
