import { createLogger } from '../../shared/logger';
import type { Knex } from '../../shared/db/knex';
import { ADAPTER_IMPLEMENTATIONS } from '../../workers/adapters/registry';
import { pollDelivery, type PollOptions } from '../../workers/delivery-poller';

/** The delivery poller's options as a test runs it by hand: sandbox suppliers answer at once, figures count from the day they land. */
export const pollOptions = (over: Partial<PollOptions> = {}): PollOptions => ({
  batchSize: 50,
  restatementDays: 7,
  finalizationHours: 72,
  callsPerSecond: 20,
  timeoutMs: 5_000,
  sandboxSlowMs: 0,
  pacingTolerance: 0.15,
  verification: { reportingDelayHours: 0, tolerancePercent: 1 },
  logger: createLogger('silent'),
  ...over,
});

/** One poll of one supplier's delivery, as the scheduled job runs it. */
export const pollSupplier = (db: Knex, adapterKey: string, over: Partial<PollOptions> = {}) =>
  pollDelivery(db, ADAPTER_IMPLEMENTATIONS.get(adapterKey)!, pollOptions(over));
