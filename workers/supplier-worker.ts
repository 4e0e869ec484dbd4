import { Worker } from 'bullmq';
import type { Redis } from 'ioredis';
import type { Knex } from 'knex';
import type { Config } from '../shared/config';
import type { Logger } from '../shared/logger';
import { supplierMutationOptions } from './mutation-options';
import type { SupplierAdapter } from '../shared/adapters/adapter';
import { executeBookingLine } from '../shared/bookings/line-execution';
import { BOOK_LINE, BookLineJobSchema } from '../shared/queues/jobs';
import { supplierQueueName } from '../shared/queues/names';

/** One adapter's booking queue consumer. */
export function supplierWorker(adapter: SupplierAdapter, deps: { connection: Redis; config: Config; db: Knex; logger: Logger }): Worker {
  const { config, db, logger } = deps;
  const settings = config.ADAPTER_SETTINGS[adapter.descriptor.key] ?? {};
  const log = logger.child({ adapterKey: adapter.descriptor.key });
  return new Worker(
    supplierQueueName(adapter.descriptor.key),
    async (job) => {
      if (job.name !== BOOK_LINE) throw new Error(`unknown supplier job ${job.name}`);
      const data = BookLineJobSchema.parse(job.data);
      const result = await executeBookingLine(db, adapter, data, {
        timeoutMs: config.SUPPLIER_TIMEOUT_MS,
        context: { db, sandboxSlowMs: config.SANDBOX_SLOW_MS },
        logger: log,
      });
      log.info({ jobId: job.id, lineId: data.lineId, bookingId: data.bookingId, result }, 'supplier operation handled');
      return { result };
    },
    {
      ...supplierMutationOptions(deps.connection, config, settings.concurrency ?? config.ADAPTER_CONCURRENCY),
      ...(settings.rateMax ? { limiter: { max: settings.rateMax, duration: settings.rateDurationMs ?? 1000 } } : {}),
    },
  );
}
