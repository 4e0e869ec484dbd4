import type { Worker } from 'bullmq';
import type { Knex } from 'knex';
import { assetDirOf, type Config } from '../shared/config/config';
import { AssetStore } from '../shared/assets/asset-store';
import type { Logger } from '../shared/logger';
import { createWorkerRedis, redisTarget } from '../shared/redis';
import { startHeartbeat } from '../shared/heartbeat';
import {
  AUDIENCE_SYNC_QUEUE,
  BROWSER_JOBS_QUEUE,
  MAINTENANCE_QUEUE,
  PERSONA_EXTRACT_QUEUE,
  PIXEL_EVENTS_QUEUE,
  WEBHOOKS_QUEUE,
  adapterKeyOfQueue,
  workerQueuesOf,
} from '../shared/queues/names';
import { QueueProducers } from '../shared/queues/producers';
import { relayOutbox } from '../shared/outbox/outbox';
import { adapterImplementations } from './adapters/registry';
import { adcpConnections, closeSellerConnections } from '../shared/adapters/adcp/connection';
import { adcpSdk } from '../shared/adapters/adcp/sdk';
import { secretBoxOf } from '../shared/crypto/secret-box';
import type { SupplierAdapter } from '../shared/adapters/adapter';
import { refreshStagedLines } from '../shared/bookings/staged-lines';
import { startTaskPoller } from './supplier-task-poller';
import { maintenanceWorker, scheduleMaintenance } from './maintenance';
import { recordBillingTerms } from '../shared/billing/payments';
import { supplierWorker } from './supplier-worker';
import { scheduleDeliveryPolls } from './delivery-schedule';
import { personaWorker } from './persona-worker';
import { audienceWorker } from './audience-worker';
import { creativeReviewWorker } from './creative-review-worker';
import { startPixelWriter, type PixelWriter } from './pixel-writer';
import { webhookWorker, type WebhookWorker } from './webhook-worker';
import { browserMissing, browserWorker, type BrowserWorker } from './browser/browser-worker';

export interface WorkerInputs {
  config: Config;
  logger: Logger;
  db: Knex;
  redisUrl: string;
}

export interface RunningWorkers {
  queues: string[];
  /** Relays pending outbox rows now (the scheduler also does so on an interval). */
  relayNow(): Promise<number>;
  /** Asks suppliers about pending bookings now (the poller also does so on an interval); how many were settled. */
  pollSupplierTasksNow(): Promise<number>;
  /** What each consumer was configured with, for operators and tests. */
  consumers(): Array<{ queue: string; concurrency: number; limiter: { max: number; duration: number } | null }>;
  close(): Promise<void>;
}

/** Polls the outbox so that work committed by any API process reaches its queue, even after a crash. */
function startRelay(db: Knex, producers: QueueProducers, intervalMs: number, logger: Logger) {
  let running: Promise<number> | null = null;
  const relayNow = () => {
    running ??= relayOutbox(db, producers.addAll).finally(() => (running = null));
    return running;
  };
  const timer = setInterval(() => {
    relayNow().catch((err) => logger.warn({ err: { message: (err as Error).message } }, 'outbox relay failed; will retry'));
  }, intervalMs);
  timer.unref();
  return {
    relayNow,
    async stop() {
      clearInterval(timer);
      await running?.catch(() => undefined);
    },
  };
}

/**
 * The workers' composition root. Consumes every queue, or those named in WORKER_QUEUES,
 * so that each supplier's workers can scale on their own.
 */
export async function startWorkers({ config, logger, db, redisUrl }: WorkerInputs): Promise<RunningWorkers> {
  const queues = workerQueuesOf(config.WORKER_QUEUES);
  // Workers capture spend and accrue fees, so they record the deployment's fee terms too.
  await recordBillingTerms(db, config, logger);

  const target = redisTarget(redisUrl, config.REDIS_CLUSTER_NODES);
  const connection = createWorkerRedis(target);
  connection.on('error', (err) => logger.warn({ err: { message: err.message } }, 'worker redis connection error'));
  const prefix = config.REDIS_PREFIX;
  const workers: Worker[] = [];
  const producers = new QueueProducers(connection, prefix);
  let pixelWriter: PixelWriter | null = null;
  let pixelRedis: ReturnType<typeof createWorkerRedis> | null = null;
  let webhooks: WebhookWorker | null = null;
  const sellers = adcpConnections(config.ADCP_SELLERS, { capabilitiesTtlMs: config.ADCP_CAPABILITIES_TTL_MS, logger });
  let browser: BrowserWorker | null = null;
  /** Queues asked of this process that it cannot consume, each with why (told in its heartbeat). */
  const unavailable: Record<string, string> = {};
  const implementations = adapterImplementations({
    adcp: sellers,
    publicBaseUrl: config.PUBLIC_BASE_URL ?? null,
    secrets: secretBoxOf(config),
  });
  // A process that works a seller's queue loads the AdCP SDK now, not inside its first booking's time.
  if (queues.some((q) => sellers.has(adapterKeyOfQueue(q) ?? ''))) await adcpSdk();
  const booking: SupplierAdapter[] = [];
  const reviewing: SupplierAdapter[] = [];

  for (const queue of queues) {
    if (queue === PIXEL_EVENTS_QUEUE) {
      // Its reads block, so it has a connection of its own.
      pixelRedis = createWorkerRedis(target);
      pixelRedis.on('error', (err) => logger.warn({ err: { message: err.message } }, 'pixel writer redis connection error'));
      pixelWriter = await startPixelWriter({ redis: pixelRedis, prefix, db, logger });
      continue;
    }
    if (queue === MAINTENANCE_QUEUE) {
      workers.push(maintenanceWorker(connection, prefix, db, logger, producers.get, config));
      continue;
    }
    if (queue === PERSONA_EXTRACT_QUEUE) {
      workers.push(personaWorker({ connection, prefix, db, logger, config }));
      continue;
    }
    if (queue === WEBHOOKS_QUEUE) {
      webhooks = webhookWorker({ connection, config, db, logger, queue: producers.get(WEBHOOKS_QUEUE) });
      workers.push(webhooks.worker);
      continue;
    }
    if (queue === BROWSER_JOBS_QUEUE) {
      const missing = await browserMissing(config.CHROMIUM_PATH);
      if (missing) {
        // Not consumed here, so that a process with a browser takes the jobs; readiness says why.
        unavailable[queue] = missing;
        logger.error({ queue }, `browser jobs are not run by this process: ${missing}`);
        continue;
      }
      browser = browserWorker({ connection, config, db, logger, assets: new AssetStore(db, assetDirOf(config)) });
      workers.push(browser.worker);
      continue;
    }
    if (queue === AUDIENCE_SYNC_QUEUE) {
      workers.push(audienceWorker({ connection, config, db, logger }));
      continue;
    }
    const adapter = implementations.get(adapterKeyOfQueue(queue) ?? '');
    if (!adapter) throw new Error(`no adapter implementation for queue ${queue}`);
    (queue.startsWith('creative-review.') ? reviewing : booking).push(adapter);
    workers.push(
      queue.startsWith('creative-review.')
        ? creativeReviewWorker(adapter, { connection, config, db, logger })
        : supplierWorker(adapter, { connection, config, db, logger }),
    );
  }
  for (const w of workers) {
    w.on('error', (err) => logger.error({ err, queue: w.name }, 'worker error'));
    w.on('failed', (job, err) => logger.warn({ queue: w.name, jobId: job?.id, err: { message: err.message } }, 'job failed'));
  }

  // The scheduler: keeps repeatable housekeeping registered and relays the outbox.
  await scheduleMaintenance(producers.get(MAINTENANCE_QUEUE));
  // Delivery: a job scheduler on each supplier queue this process consumes, so polling scales with WORKER_QUEUES.
  await scheduleDeliveryPolls(queues, implementations, producers.get, config.DELIVERY_POLL_EVERY_MS);
  const relay = startRelay(db, producers, config.OUTBOX_RELAY_INTERVAL_MS, logger);
  // The processes that book with (or review creatives at) a supplier also follow up what it is still deciding.
  const taskPoller = startTaskPoller(db, booking, reviewing, {
    intervalMs: config.ADCP_TASK_POLL_INTERVAL_MS,
    timeoutMs: config.SUPPLIER_TIMEOUT_MS,
    logger,
    afterApproval: refreshStagedLines,
    reviewMaxWaitMs: config.ADCP_REVIEW_MAX_WAIT_HOURS * 3_600_000,
    taskMaxWaitMs: config.ADCP_TASK_MAX_WAIT_HOURS * 3_600_000,
  });

  const beats = [
    startHeartbeat(
      connection,
      prefix,
      'worker',
      queues.filter((q) => !unavailable[q]),
      config.HEARTBEAT_TTL_MS,
      unavailable,
    ),
    startHeartbeat(connection, prefix, 'scheduler', [], config.HEARTBEAT_TTL_MS),
  ];
  logger.info({ queues: queues.length }, 'workers started');
  let closing: Promise<void> | undefined;

  return {
    queues,
    relayNow: relay.relayNow,
    pollSupplierTasksNow: taskPoller.pollNow,
    consumers: () => workers.map((w) => ({ queue: w.name, concurrency: w.concurrency, limiter: w.opts.limiter ?? null })),
    // Once: a second close (a second signal, a test's teardown) waits for the first rather than
    // disconnecting closed connections again, which leaves a timer per connection behind.
    close: () =>
      (closing ??= (async () => {
        // Stop announcing and relaying first, then let in-flight jobs finish before the connection goes.
        await Promise.all(beats.map((b) => b.stop()));
        await relay.stop();
        await webhooks?.stopSweep();
        await browser?.stop();
        await taskPoller.stop();
        await Promise.all([...workers.map((w) => w.close()), pixelWriter?.close()]);
        // After the jobs in flight: they may still be talking to a seller.
        await closeSellerConnections(sellers.values());
        pixelRedis?.disconnect();
        await producers.close();
        connection.disconnect();
      })()),
  };
}
