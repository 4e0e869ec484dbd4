import type { Knex } from 'knex';
import { conflict, notFound } from '../errors';
import { findSubscription } from './subscription-store';
import type { Delivery } from './subscription-schemas';

const iso = (d: Date | null) => (d ? d.toISOString() : null);

interface DeliveryRow {
  id: string;
  event_id: string;
  type: string;
  subject_id: string;
  subject_version: number;
  status: Delivery['status'];
  attempts: number;
  next_attempt_at: Date | null;
  delivered_at: Date | null;
  last_status_code: number | null;
  last_error: string | null;
  created_at: Date;
}

async function views(db: Knex, rows: DeliveryRow[]): Promise<Delivery[]> {
  const attempts = rows.length
    ? await db('webhook_attempts')
        .whereIn(
          'delivery_id',
          rows.map((r) => r.id),
        )
        .orderBy('id')
        .select('delivery_id', 'attempt', 'started_at', 'status_code', 'latency_ms', 'error')
    : [];
  return rows.map((r) => ({
    id: r.id,
    eventId: r.event_id,
    eventType: r.type as Delivery['eventType'],
    subjectId: r.subject_id,
    subjectVersion: r.subject_version,
    status: r.status,
    attemptCount: r.attempts,
    nextAttemptAt: r.status === 'pending' ? iso(r.next_attempt_at) : null,
    deliveredAt: iso(r.delivered_at),
    lastStatusCode: r.last_status_code,
    lastError: r.last_error,
    createdAt: r.created_at.toISOString(),
    attempts: attempts
      .filter((a) => a.delivery_id === r.id)
      .map((a) => ({
        attempt: a.attempt,
        startedAt: (a.started_at as Date).toISOString(),
        statusCode: a.status_code,
        latencyMs: a.latency_ms,
        error: a.error,
      })),
  }));
}

const deliveryQuery = (db: Knex) =>
  db('webhook_deliveries as d').join('webhook_events as e', 'e.id', 'd.event_id').select('d.*', 'e.type', 'e.subject_version');

/** A subscription's deliveries, newest first, each with its attempts (status code, latency) and next retry. */
export async function listDeliveries(
  db: Knex,
  workspaceId: string,
  subscriptionId: string,
  q: { status?: Delivery['status']; limit: number },
): Promise<Delivery[]> {
  await findSubscription(db, workspaceId, subscriptionId);
  const rows: DeliveryRow[] = await deliveryQuery(db)
    .where('d.subscription_id', subscriptionId)
    .modify((b) => (q.status ? b.andWhere('d.status', q.status) : b))
    .orderBy('d.event_seq', 'desc')
    .limit(q.limit);
  return views(db, rows);
}

/**
 * Sends a delivered or failed delivery again, with the same event id (so `webhook-id` lets the
 * receiver recognise it), and a fresh set of retries. A pending one is already on its way: 409.
 */
export async function redeliver(db: Knex, workspaceId: string, subscriptionId: string, deliveryId: string): Promise<Delivery> {
  await findSubscription(db, workspaceId, subscriptionId);
  const [row] = await db('webhook_deliveries')
    .where({ id: deliveryId, subscription_id: subscriptionId })
    .whereIn('status', ['delivered', 'failed'])
    .update({ status: 'pending', attempts: 0, next_attempt_at: db.fn.now(), leased_until: null, delivered_at: null })
    .returning('id');
  if (!row) {
    const exists = await db('webhook_deliveries').where({ id: deliveryId, subscription_id: subscriptionId }).first('id');
    if (!exists) throw notFound();
    throw conflict('The delivery is still being attempted.', 'conflict');
  }
  const [view] = await views(db, await deliveryQuery(db).where('d.id', deliveryId));
  return view!;
}
