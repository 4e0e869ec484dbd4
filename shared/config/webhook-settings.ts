import { z } from 'zod';

const msList = z
  .string()
  .transform((v) => v.split(',').map((s) => Number(s.trim())))
  .pipe(
    z
      .array(
        z
          .number()
          .int()
          .min(1)
          .max(7 * 24 * 3600 * 1000),
      )
      .min(1)
      .max(50),
  );

/** Outbound webhooks (docs/webhooks.md). */
export const webhookConfig = {
  /**
   * The pause before each retry of a delivery, comma-separated: the defaults retry after 5 s, 30 s,
   * 2 min, … for 32 hours in all, then the delivery counts as failed and its subscription as failing.
   */
  WEBHOOK_BACKOFF_MS: msList.default([
    5_000, 30_000, 120_000, 600_000, 1_800_000, 3_600_000, 7_200_000, 14_400_000, 28_800_000, 28_800_000, 28_800_000,
  ]),
  /** How long a receiver has to answer one delivery. */
  WEBHOOK_TIMEOUT_MS: z.coerce.number().int().min(100).max(60_000).default(10_000),
  /** Deliveries of one subscription sent at once: a slow receiver holds no more than this many workers. */
  WEBHOOK_SUBSCRIPTION_CONCURRENCY: z.coerce.number().int().min(1).max(64).default(4),
  /** Deliveries one worker process sends at once, across subscriptions. */
  WEBHOOK_WORKER_CONCURRENCY: z.coerce.number().int().min(1).max(500).default(32),
  /** How often a worker looks for deliveries that are due and have no job (after a crash, or a busy subscription). */
  WEBHOOK_SWEEP_INTERVAL_MS: z.coerce.number().int().min(50).default(5_000),
  /** Receivers on loopback addresses (http allowed there); default: everywhere but production. */
  WEBHOOK_ALLOW_LOOPBACK: z
    .enum(['true', 'false'])
    .transform((v) => v === 'true')
    .optional(),
  /** How long the previous signing secret still signs after a rotation. */
  WEBHOOK_SECRET_OVERLAP_HOURS: z.coerce
    .number()
    .int()
    .min(0)
    .max(24 * 30)
    .default(24),
};
