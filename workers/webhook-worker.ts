import { Worker, type Queue } from 'bullmq';
import { secretBoxOf } from '../shared/crypto/secret-box';
import type { RedisClient } from '../shared/redis';
import type { Knex } from 'knex';
import type { Config } from '../shared/config/config';
import type { Logger } from '../shared/logger';
import { WEBHOOKS_QUEUE, queuePrefix } from '../shared/queues/names';
import { claimDelivery, DELIVER, DeliverJobSchema, dueDeliveries, recordOutcome, wakeDeliveries } from '../shared/webhooks/delivery-engine';
import { sendDelivery } from '../shared/webhooks/send';
import { webhookUrlPolicy } from '../shared/webhooks/policy';

export interface WebhookWorker {
  worker: Worker;
  /** Stops the sweep (before the worker closes). */
  stopSweep(): Promise<void>;
}

/**
 * Sends webhook deliveries. A job only wakes a delivery: the row decides whether it is due, its
 * turn (order per subject) and within its subscription's concurrency; a job that finds it is not
 * ends at once. A sweep wakes due deliveries that have no job (a crash, a busy subscription).
 */
export function webhookWorker(deps: { connection: RedisClient; config: Config; db: Knex; logger: Logger; queue: Queue }): WebhookWorker {
  const { config, db, logger, queue } = deps;
  const policy = webhookUrlPolicy(config);
  const perSubscription = config.WEBHOOK_SUBSCRIPTION_CONCURRENCY;
  // A claimed delivery is held for the send's timeout and a margin; a worker that dies leaves it to run out.
  const leaseMs = config.WEBHOOK_TIMEOUT_MS + 5_000;
  const secrets = secretBoxOf(config);
  // A wake that cannot be added only waits for the sweep.
  queue.on('error', (err) => logger.warn({ err: { message: err.message } }, 'webhook queue error'));

  const worker = new Worker(
    WEBHOOKS_QUEUE,
    async (job) => {
      if (job.name !== DELIVER) throw new Error(`unknown webhook job ${job.name}`);
      const { deliveryId } = DeliverJobSchema.parse(job.data);
      // One delivery, then its subject's next ones while they are due: a line's events follow
      // each other without a trip through the queue between them (bounded, to share the worker).
      let id: string | null = deliveryId;
      let sent = 0;
      for (; id && sent < 50; sent++) {
        const claimed = await claimDelivery(db, id, leaseMs, perSubscription, secrets);
        if (!claimed) break;
        const result = await sendDelivery(claimed, policy, config.WEBHOOK_TIMEOUT_MS);
        const outcome = await recordOutcome(db, claimed, result, config.WEBHOOK_BACKOFF_MS, perSubscription);
        await wakeDeliveries(queue, outcome.wake);
        if (result.error || (result.statusCode ?? 0) >= 300) {
          logger.info(
            {
              deliveryId: id,
              subscriptionId: claimed.subscriptionId,
              attempt: claimed.attempts,
              statusCode: result.statusCode,
              error: result.error,
            },
            'webhook not delivered',
          );
        }
        id = outcome.next;
      }
      if (id && sent === 50) await wakeDeliveries(queue, [{ id, attempts: 0 }]);
      return { sent };
    },
    {
      connection: deps.connection,
      prefix: queuePrefix(config.REDIS_PREFIX, WEBHOOKS_QUEUE),
      concurrency: config.WEBHOOK_WORKER_CONCURRENCY,
      lockDuration: config.WORKER_LOCK_DURATION_MS,
      stalledInterval: config.WORKER_STALLED_INTERVAL_MS,
    },
  );

  let sweeping: Promise<void> | null = null;
  const sweep = () => {
    sweeping ??= (async () => {
      try {
        await wakeDeliveries(queue, await dueDeliveries(db, perSubscription));
      } catch (err) {
        logger.warn({ err: { message: (err as Error).message } }, 'webhook sweep failed; will retry');
      }
    })().finally(() => (sweeping = null));
    return sweeping;
  };
  const timer = setInterval(() => void sweep(), config.WEBHOOK_SWEEP_INTERVAL_MS);
  timer.unref();

  return {
    worker,
    async stopSweep() {
      clearInterval(timer);
      await sweeping;
    },
  };
}
