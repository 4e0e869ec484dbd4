import type { Knex } from 'knex';

/** Events are kept 30 days with their deliveries and attempts (the inspection and redelivery window). */
export const WEBHOOK_RETENTION_MS = 30 * 24 * 60 * 60 * 1000;

/** Removes events past retention, with their deliveries and attempts; an event still being delivered stays. */
export async function pruneWebhookRecord(db: Knex, now = new Date()): Promise<number> {
  return db('webhook_events')
    .where('occurred_at', '<', new Date(now.getTime() - WEBHOOK_RETENTION_MS))
    .whereNotExists(db('webhook_deliveries as d').whereRaw('d.event_id = webhook_events.id').andWhere('d.status', 'pending'))
    .delete();
}
