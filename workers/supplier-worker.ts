import { verificationSettingsFor } from '../shared/delivery/control-verification';
import { Worker } from 'bullmq';
import type { RedisClient } from '../shared/redis';
import type { Knex } from 'knex';
import type { Config } from '../shared/config/config';
import type { Logger } from '../shared/logger';
import { supplierMutationOptions } from './mutation-options';
import type { SupplierAdapter } from '../shared/adapters/adapter';
import { executeLineJob } from '../shared/bookings/lines/flow';
import {
  BOOK_LINE,
  BookLineJobSchema,
  DeliveryPollJobSchema,
  LINE_OPERATION,
  LineOperationJobSchema,
  POLL_DELIVERY,
} from '../shared/queues/jobs';
import { pollDelivery } from './delivery-poller';
import { supplierQueueName } from '../shared/queues/names';
import { sellerBillingTerms } from '../shared/config/seller-billing';

/** One adapter's queue consumer: its bookings, and the operations asked of its booked lines. */
export function supplierWorker(
  adapter: SupplierAdapter,
  deps: { connection: RedisClient; config: Config; db: Knex; logger: Logger },
): Worker {
  const { config, db, logger } = deps;
  const settings = config.ADAPTER_SETTINGS[adapter.descriptor.key] ?? {};
  const log = logger.child({ adapterKey: adapter.descriptor.key });
  return new Worker(
    supplierQueueName(adapter.descriptor.key),
    async (job) => {
      const options = {
        timeoutMs: config.SUPPLIER_TIMEOUT_MS,
        lateAnswerMs: config.SUPPLIER_LATE_ANSWER_MS,
        context: { db, sandboxSlowMs: config.SANDBOX_SLOW_MS },
        logger: log,
      };
      if (job.name === BOOK_LINE) {
        const data = BookLineJobSchema.parse(job.data);
        const result = await executeLineJob(db, adapter, data, options);
        log.info({ jobId: job.id, lineId: data.lineId, bookingId: data.bookingId, result }, 'supplier operation handled');
        return { result };
      }
      if (job.name === LINE_OPERATION) {
        const data = LineOperationJobSchema.parse(job.data);
        const result = await executeLineJob(db, adapter, data, options);
        log.info({ jobId: job.id, lineId: data.lineId, operationId: data.operationId, result }, 'line operation handled');
        return { result };
      }
      if (job.name === POLL_DELIVERY) {
        const data = DeliveryPollJobSchema.parse(job.data ?? {});
        const result = await pollDelivery(db, adapter, {
          batchSize: config.DELIVERY_BATCH_SIZE,
          restatementDays: config.DELIVERY_RESTATEMENT_DAYS,
          finalizationHours: sellerBillingTerms(config, adapter.descriptor.key).finalizationHours,
          callsPerSecond: config.DELIVERY_CALLS_PER_SECOND,
          timeoutMs: config.SUPPLIER_TIMEOUT_MS,
          sandboxSlowMs: config.SANDBOX_SLOW_MS,
          pacingTolerance: config.DELIVERY_PACING_TOLERANCE,
          verification: verificationSettingsFor(config, adapter.descriptor),
          logger: log,
          ...(data.advertiserId ? { advertiserId: data.advertiserId } : {}),
        });
        log.info({ jobId: job.id, ...result }, 'delivery polled');
        return result;
      }
      throw new Error(`unknown supplier job ${job.name}`);
    },
    {
      ...supplierMutationOptions(
        deps.connection,
        supplierQueueName(adapter.descriptor.key),
        config,
        settings.concurrency ?? config.ADAPTER_CONCURRENCY,
      ),
      ...(settings.rateMax ? { limiter: { max: settings.rateMax, duration: settings.rateDurationMs ?? 1000 } } : {}),
    },
  );
}
