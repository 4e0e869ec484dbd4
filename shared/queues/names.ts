import { ADAPTERS } from '../adapters/catalogue';
import { ConfigError } from '../config/config';

/**
 * Queue names, one place. Supplier queues are `supplier.<adapterKey>`; the maintenance
 * queue carries scheduled housekeeping (outbox relay, idempotency record expiry).
 */
export const MAINTENANCE_QUEUE = 'maintenance';
export const PERSONA_EXTRACT_QUEUE = 'persona-extract';
export const AUDIENCE_SYNC_QUEUE = 'audience-sync';
/** Outbound webhook deliveries (the name the database function `webhook_record` writes in its outbox rows). */
export const WEBHOOKS_QUEUE = 'webhooks';
/** Browser jobs: supervised, read-only visits of supplier sites, each in a Chromium of its own. */
export const BROWSER_JOBS_QUEUE = 'browser-jobs';
/** Not a BullMQ queue: the Redis stream of accepted pageviews, written to PostgreSQL in batches. */
export const PIXEL_EVENTS_QUEUE = 'pixel-events';

/**
 * BullMQ's key prefix for one queue of a deployment's REDIS_PREFIX: `<REDIS_PREFIX>:{<queue>}`.
 * Each queue has a hash tag of its own, so a queue's keys share one Redis Cluster slot (as
 * BullMQ's multi-key scripts require) while different queues spread over the cluster's nodes.
 * The keys stay under REDIS_PREFIX, so a deployment's keys are still found (and removed) by it.
 */
export const queuePrefix = (redisPrefix: string, queue: string) => `${redisPrefix}:{${queue}}`;

export const supplierQueueName = (adapterKey: string) => `supplier.${adapterKey}`;

export const SUPPLIER_QUEUES = ADAPTERS.map((a) => supplierQueueName(a.key));

/** Creative review runs per adapter too: each supplier reviews creatives its own way and pace. */
export const creativeReviewQueueName = (adapterKey: string) => `creative-review.${adapterKey}`;
export const CREATIVE_REVIEW_QUEUES = ADAPTERS.filter((a) => a.kind !== 'workflow').map((a) => creativeReviewQueueName(a.key));

/** The BullMQ queues, each with jobs to show on the dashboard. */
export function jobQueues(): string[] {
  return [
    MAINTENANCE_QUEUE,
    PERSONA_EXTRACT_QUEUE,
    AUDIENCE_SYNC_QUEUE,
    WEBHOOKS_QUEUE,
    BROWSER_JOBS_QUEUE,
    ...SUPPLIER_QUEUES,
    ...CREATIVE_REVIEW_QUEUES,
  ];
}

/** Every queue a deployment must have consumers for: the job queues and the pageview stream. */
export function requiredQueues(): string[] {
  return [...jobQueues(), PIXEL_EVENTS_QUEUE];
}

export function adapterKeyOfQueue(queue: string): string | null {
  if (queue.startsWith('supplier.')) return queue.slice('supplier.'.length);
  if (queue.startsWith('creative-review.')) return queue.slice('creative-review.'.length);
  return null;
}

/** Roles WORKER_QUEUES may name instead of single queues, so a process can take a whole kind of work. */
export const QUEUE_GROUPS: Readonly<Record<string, readonly string[]>> = {
  suppliers: SUPPLIER_QUEUES,
  'creative-reviews': CREATIVE_REVIEW_QUEUES,
  audiences: [AUDIENCE_SYNC_QUEUE],
  personas: [PERSONA_EXTRACT_QUEUE],
  webhooks: [WEBHOOKS_QUEUE],
  // Only on processes whose machine has Chromium (CHROMIUM_PATH).
  browser: [BROWSER_JOBS_QUEUE],
  housekeeping: [MAINTENANCE_QUEUE],
  pixel: [PIXEL_EVENTS_QUEUE],
};

/** Queue and group names to the queues they mean, in order, each once; unknown names are returned apart. */
export function expandWorkerQueues(names: string[]): { queues: string[]; unknown: string[] } {
  const known = requiredQueues();
  const queues = new Set<string>();
  const unknown: string[] = [];
  for (const name of names) {
    const group = Object.hasOwn(QUEUE_GROUPS, name) ? QUEUE_GROUPS[name] : undefined;
    if (group) group.forEach((q) => queues.add(q));
    else if (known.includes(name)) queues.add(name);
    else unknown.push(name);
  }
  return { queues: [...queues], unknown };
}

/**
 * The queues a worker process consumes: those WORKER_QUEUES names (roles expanded), or all of
 * them. An unknown name stops the process as any bad configuration does.
 */
export function workerQueuesOf(names: readonly string[]): string[] {
  if (!names.length) return requiredQueues();
  const { queues, unknown } = expandWorkerQueues([...names]);
  if (unknown.length) {
    const known = [...Object.keys(QUEUE_GROUPS), ...requiredQueues()].join(', ');
    throw new ConfigError(`Invalid configuration:\n  WORKER_QUEUES: names unknown queue(s): ${unknown.join(', ')}. Known: ${known}`);
  }
  return queues;
}
