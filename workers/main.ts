import type { Worker } from 'bullmq';
import type { Knex } from 'knex';
import type { Config } from '../shared/config';
import type { Logger } from '../shared/logger';
import { createWorkerRedis } from '../shared/redis';
import { startHeartbeat } from '../shared/heartbeat';
import {
  AUDIENCE_SYNC_QUEUE,
  MAINTENANCE_QUEUE,
  PERSONA_EXTRACT_QUEUE,
  PIXEL_EVENTS_QUEUE,
  adapterKeyOfQueue,
  requiredQueues,
} from '../shared/queues/names';
import { QueueProducers } from '../shared/queues/producers';
import { relayOutbox } from '../shared/outbox/outbox';
import { ADAPTER_IMPLEMENTATIONS } from './adapters/registry';
import { maintenanceWorker, scheduleMaintenance } from './maintenance';
import { recordBillingTerms } from '../shared/billing/payments';
import { supplierWorker } from './supplier-worker';
import { personaWorker } from './persona-worker';
import { audienceWorker } from './audience-worker';
import { creativeReviewWorker } from './creative-review-worker';
import { startPixelWriter, type PixelWriter } from './pixel-writer';

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
  // Configuration has expanded roles and refused unknown names.
  const queues = config.WORKER_QUEUES.length ? config.WORKER_QUEUES : requiredQueues();
  // Workers capture spend and accrue fees, so they record the deployment's fee terms too.
  await recordBillingTerms(db, config, logger);

  const connection = createWorkerRedis(redisUrl);
  connection.on('error', (err) => logger.warn({ err: { message: err.message } }, 'worker redis connection error'));
  const prefix = config.REDIS_PREFIX;
  const workers: Worker[] = [];
  const producers = new QueueProducers(connection, prefix);
  let pixelWriter: PixelWriter | null = null;
  let pixelRedis: ReturnType<typeof createWorkerRedis> | null = null;

  for (const queue of queues) {
    if (queue === PIXEL_EVENTS_QUEUE) {
      // Its reads block, so it has a connection of its own.
      pixelRedis = createWorkerRedis(redisUrl);
      pixelRedis.on('error', (err) => logger.warn({ err: { message: err.message } }, 'pixel writer redis connection error'));
      pixelWriter = await startPixelWriter({ redis: pixelRedis, prefix, db, logger });
      continue;
    }
    if (queue === MAINTENANCE_QUEUE) {
      workers.push(maintenanceWorker(connection, prefix, db, logger, producers.get, config));
      continue;
    }
    if (queue === PERSONA_EXTRACT_QUEUE) {
      workers.push(personaWorker({ connection, prefix, db, logger }));
      continue;
    }
    if (queue === AUDIENCE_SYNC_QUEUE) {
      workers.push(audienceWorker({ connection, config, db, logger }));
      continue;
    }
    const adapter = ADAPTER_IMPLEMENTATIONS.get(adapterKeyOfQueue(queue) ?? '');
    if (!adapter) throw new Error(`no adapter implementation for queue ${queue}`);
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
  const relay = startRelay(db, producers, config.OUTBOX_RELAY_INTERVAL_MS, logger);

  const beats = [
    startHeartbeat(connection, prefix, 'worker', queues, config.HEARTBEAT_TTL_MS),
    startHeartbeat(connection, prefix, 'scheduler', [], config.HEARTBEAT_TTL_MS),
  ];
  logger.info({ queues: queues.length }, 'workers started');
  let closing: Promise<void> | undefined;

  return {
    queues,
    relayNow: relay.relayNow,
    consumers: () => workers.map((w) => ({ queue: w.name, concurrency: w.concurrency, limiter: w.opts.limiter ?? null })),
    // Once: a second close (a second signal, a test's teardown) waits for the first rather than
    // disconnecting closed connections again, which leaves a timer per connection behind.
    close: () =>
      (closing ??= (async () => {
        // Stop announcing and relaying first, then let in-flight jobs finish before the connection goes.
        await Promise.all(beats.map((b) => b.stop()));
        await relay.stop();
        await Promise.all([...workers.map((w) => w.close()), pixelWriter?.close()]);
        pixelRedis?.disconnect();
        await producers.close();
        connection.disconnect();
      })()),
  };
}
