import type { Knex } from 'knex';
import type { SecretBox } from '../crypto/secret-box';
import type { Queue } from 'bullmq';
import { z } from 'zod';

/**
 * The delivery rules, all in PostgreSQL: the delivery row is the truth, jobs only wake it.
 *
 * - Order: a delivery is sent only when no earlier event of the same subject waits for the same
 *   subscription (a later version never overtakes an earlier one).
 * - Concurrency: at most `perSubscription` deliveries of one subscription are in flight, so a slow
 *   or dead receiver holds only that many workers.
 * - Lease: a claimed delivery is leased for the send's timeout and a margin; a worker that dies
 *   mid-send leaves a lease that runs out, and the delivery is sent again (same event id).
 */

export const DeliverJobSchema = z.strictObject({ deliveryId: z.uuid() });
export const DELIVER = 'deliver';

/** Wakes a delivery: one job per delivery and attempt count, so a wake already queued is not added twice. */
export async function wakeDeliveries(queue: Queue, wakes: ReadonlyArray<{ id: string; attempts: number; delayMs?: number }>) {
  if (!wakes.length) return;
  await queue.addBulk(
    wakes
      .map((w) => ({ id: w.id, attempts: w.attempts, delayMs: w.delayMs }))
      .map((w) => ({
        name: DELIVER,
        data: { deliveryId: w.id },
        opts: {
          jobId: `webhook-${w.id}-k${w.attempts}`,
          delay: w.delayMs ?? 0,
          attempts: 1,
          removeOnComplete: true,
          removeOnFail: true,
        },
      })),
  );
}

/** A delivery claimed for one send: what to send and where. */
export interface Claimed {
  id: string;
  subscriptionId: string;
  attempts: number;
  url: string;
  secrets: string[];
  event: {
    id: string;
    type: string;
    workspaceId: string;
    subjectType: string;
    subjectId: string;
    subjectVersion: number;
    body: Record<string, unknown>;
    occurredAt: Date;
  };
}

const NO_EARLIER = `not exists (select 1 from webhook_deliveries e
                                 where e.subscription_id = d.subscription_id and e.subject_id = d.subject_id
                                   and e.status = 'pending' and e.event_seq < d.event_seq)`;
const DUE = `d.status = 'pending' and d.next_attempt_at <= now() and (d.leased_until is null or d.leased_until < now())`;

/** Claims the delivery for one send, or null when it is not due, waits its turn, or its subscription is busy or disabled. */
export async function claimDelivery(
  db: Knex,
  deliveryId: string,
  leaseMs: number,
  perSubscription: number,
  secrets: SecretBox,
): Promise<Claimed | null> {
  const target = await db('webhook_deliveries as d')
    .join('webhook_subscriptions as s', 's.id', 'd.subscription_id')
    .where('d.id', deliveryId)
    // Most wakes that are not due or not their subject's turn end here, without a lock.
    .andWhereRaw(`${DUE} and ${NO_EARLIER}`)
    .first('s.id', 's.url', 's.enabled', 's.secret', 's.previous_secret', 's.previous_secret_expires_at');
  if (!target?.enabled) return null;
  const sub = target;
  return db.transaction(async (trx) => {
    // Claims of one subscription take turns, so its in-flight count is exact. A claim that finds
    // another under way tries again briefly, then leaves the delivery to the next wake: it never
    // holds a connection waiting for a lock.
    for (let tries = 0; ; tries++) {
      const { rows: locked } = await trx.raw('select pg_try_advisory_xact_lock(hashtextextended(?, 0)) as ok', [`webhook:${sub.id}`]);
      if (locked[0].ok) break;
      if (tries >= 5) return null;
      await new Promise((r) => setTimeout(r, 5 + Math.random() * 15));
    }
    const { rows } = await trx.raw(
      `update webhook_deliveries d set leased_until = now() + make_interval(secs => ?::double precision / 1000), attempts = d.attempts + 1
        where d.id = ? and ${DUE} and ${NO_EARLIER}
          and (select count(*) from webhook_deliveries f
                where f.subscription_id = d.subscription_id and f.status = 'pending' and f.leased_until > now()) < ?
        returning d.id, d.attempts, d.event_id`,
      [leaseMs, deliveryId, perSubscription],
    );
    const claimed = rows[0] as { id: string; attempts: number; event_id: string } | undefined;
    if (!claimed) return null;
    const e = await trx('webhook_events').where({ id: claimed.event_id }).first();
    const overlap = sub.previous_secret && sub.previous_secret_expires_at > new Date();
    return {
      id: claimed.id,
      subscriptionId: sub.id,
      attempts: claimed.attempts,
      url: sub.url,
      secrets: (overlap ? [sub.secret, sub.previous_secret] : [sub.secret]).map((stored: string) => secrets.open(stored)),
      event: {
        id: e.id,
        type: e.type,
        workspaceId: e.workspace_id,
        subjectType: e.subject_type,
        subjectId: e.subject_id,
        subjectVersion: e.subject_version,
        body: e.body,
        occurredAt: e.occurred_at,
      },
    };
  });
}

export interface SendResult {
  startedAt: Date;
  latencyMs: number;
  statusCode: number | null;
  error: string | null;
}

const delivered = (r: SendResult) => r.statusCode !== null && r.statusCode >= 200 && r.statusCode < 300;

/**
 * Records a send's outcome. Delivered: done, and its subscription is no longer failing. Not
 * delivered: retried after the next pause of the back-off schedule, or, with none left, failed
 * and its subscription marked failing. Returns the deliveries to wake now (the subject's next
 * event, others of the subscription that waited for a free slot) and the retry, if any.
 */
export async function recordOutcome(
  db: Knex,
  c: Claimed,
  r: SendResult,
  backoffMs: readonly number[],
  perSubscription: number,
): Promise<{ wake: Array<{ id: string; attempts: number; delayMs?: number }>; next: string | null }> {
  return db.transaction(async (trx) => {
    await trx('webhook_attempts').insert({
      delivery_id: c.id,
      attempt: trx.raw('(select count(*) + 1 from webhook_attempts where delivery_id = ?)', [c.id]),
      started_at: r.startedAt,
      status_code: r.statusCode,
      latency_ms: Math.round(r.latencyMs),
      error: r.error?.slice(0, 300) ?? null,
    });
    const common = { leased_until: null, last_status_code: r.statusCode, last_error: r.error?.slice(0, 300) ?? null };
    const wake: Array<{ id: string; attempts: number; delayMs?: number }> = [];
    if (delivered(r)) {
      await trx('webhook_deliveries')
        .where({ id: c.id })
        .update({ ...common, status: 'delivered', delivered_at: trx.fn.now() });
      await trx('webhook_subscriptions').where({ id: c.subscriptionId }).whereNotNull('failing_since').update({ failing_since: null });
    } else if (c.attempts > backoffMs.length) {
      await trx('webhook_deliveries')
        .where({ id: c.id })
        .update({ ...common, status: 'failed' });
      await trx('webhook_subscriptions').where({ id: c.subscriptionId }).whereNull('failing_since').update({ failing_since: trx.fn.now() });
    } else {
      const delayMs = backoffMs[c.attempts - 1]!;
      await trx('webhook_deliveries')
        .where({ id: c.id })
        .update({ ...common, next_attempt_at: trx.raw('now() + make_interval(secs => ?::double precision / 1000)', [delayMs]) });
      wake.push({ id: c.id, attempts: c.attempts, delayMs });
    }
    const due = await dueDeliveries(trx, perSubscription, { subscriptionId: c.subscriptionId, subjectId: c.event.subjectId });
    // The subject's next event, when it is due now, is for the same worker to send at once.
    const next = wake.length === 0 && due[0]?.subject_id === c.event.subjectId ? due.shift()!.id : null;
    wake.push(...due);
    return { wake, next };
  });
}

/**
 * Deliveries that are due, free and first of their subject, the oldest events first and at most
 * `perSubscription` of each subscription: of one subscription (after a send, its subject's next
 * event first), or of every subscription (the sweep, which finds what a crash or a busy slot left
 * without a job).
 */
export async function dueDeliveries(
  db: Knex,
  perSubscription: number,
  scope?: { subscriptionId: string; subjectId: string },
): Promise<Array<{ id: string; attempts: number; subject_id: string }>> {
  if (scope) {
    // After a send: the subject's next event, then the subscription's oldest waiting heads (index order).
    const next = await db('webhook_deliveries as d')
      .where({ 'd.subscription_id': scope.subscriptionId, 'd.subject_id': scope.subjectId, 'd.status': 'pending' })
      .orderBy('d.event_seq')
      .first('d.id', 'd.attempts', 'd.subject_id', db.raw(`(${DUE}) as due`));
    const heads = await db('webhook_deliveries as d')
      .where({ 'd.subscription_id': scope.subscriptionId })
      .whereRaw(`${DUE} and ${NO_EARLIER}`)
      .orderBy('d.event_seq')
      .limit(perSubscription)
      .select('d.id', 'd.attempts', 'd.subject_id');
    const first = next?.due ? [{ id: next.id, attempts: next.attempts, subject_id: next.subject_id }] : [];
    return [...first, ...heads.filter((h) => h.id !== next?.id)].slice(0, perSubscription);
  }
  const { rows } = await db.raw(
    `select id, attempts, subject_id from (
       select d.id, d.attempts, d.subject_id, row_number() over (partition by d.subscription_id order by d.event_seq) as rank
         from webhook_deliveries d
        where ${DUE} and ${NO_EARLIER}) heads
      where rank <= ? order by rank limit 1000`,
    [perSubscription],
  );
  return rows as Array<{ id: string; attempts: number; subject_id: string }>;
}
