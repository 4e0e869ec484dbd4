import { Queue, Worker } from 'bullmq';
import type { RedisClient } from '../shared/redis';
import type { Knex } from 'knex';
import type { Logger } from '../shared/logger';
import { MAINTENANCE_QUEUE, queuePrefix } from '../shared/queues/names';
import { EVALUATE_RULES, EvaluateRulesJobSchema } from '../shared/queues/jobs';
import { evaluateRules } from '../shared/rules/rule-evaluation';
import { purgeExpiredIdempotencyRecords } from '../shared/idempotency/retention';
import { purgeExpiredOauthArtifacts } from '../shared/auth/oauth-artifact-retention';
import { pruneRelayedOutbox } from '../shared/outbox/outbox';
import { pruneWebhookRecord } from '../shared/webhooks/retention';
import { retryUnsent } from './retry-unsent';
import { requeueVanished } from './requeue-vanished';
import { sweepStuck } from './sweep-stuck-attempts';
import { rollUpPageviews } from '../shared/pixel/pageview-rollup';
import { oldestUnstoredPageviewAt } from '../shared/pixel/pixel-stream';
import type { Config } from '../shared/config/config';
import { runExclusively } from '../shared/runtime/exclusive-run';
import { closeOutBooking, closeoutDue } from '../shared/delivery/closeout';
import { sweepFinality } from '../shared/delivery/finality';
import { expireMakegoods } from '../shared/delivery/makegoods';
import { sellerBillingTerms } from '../shared/config/seller-billing';
import { freshHeartbeats } from '../shared/heartbeat';
import { browserService } from '../shared/readiness/checks';
import { failUnservedBrowserJobs } from '../shared/bookings/browser-job-run';
import { ArtifactStore, artifactDirOf, sweepExpiredArtifacts } from '../shared/studies/artifact-store';

/** Housekeeping jobs and how often each runs. */
const SCHEDULES: Array<[name: string, everyMs: number]> = [
  ['purge-idempotency-records', 60 * 60 * 1000],
  ['retry-unsent', 5 * 60 * 1000],
  // Often: a stuck attempt is a line someone is waiting on.
  ['sweep-stuck-attempts', 60 * 1000],
  ['rollup-pageviews', 10 * 60 * 1000],
  ['sweep-artifact-retention', 60 * 60 * 1000],
  ['prune-relayed-outbox', 6 * 60 * 60 * 1000],
  ['prune-webhook-record', 6 * 60 * 60 * 1000],
  ['purge-oauth-artifacts', 60 * 60 * 1000],
  // Bookings of suppliers that report no delivery themselves (workflow) close out here too.
  ['closeout-bookings', 60 * 60 * 1000],
  // Days past their seller's window become final and months close (workflow lines wait for staff); make-goods past their date expire.
  ['settle-finality', 60 * 60 * 1000],
  // Browser jobs no live worker can run end with why, instead of waiting unseen.
  ['fail-unserved-browser-jobs', 15 * 1000],
  // Automatic rules also run after every delivery poll; this cycle catches what a poll did not bring.
  [EVALUATE_RULES, 15 * 60 * 1000],
];

/** Housekeeping on a schedule: safe to run twice, so ordinary retries are fine here. */
export async function scheduleMaintenance(queue: Queue): Promise<void> {
  for (const [name, every] of SCHEDULES) {
    await queue.upsertJobScheduler(name, { every }, { name, opts: { removeOnComplete: 100, removeOnFail: 100, attempts: 3 } });
  }
}

export function maintenanceWorker(
  connection: RedisClient,
  prefix: string,
  db: Knex,
  logger: Logger,
  queueFor: (name: string) => Queue,
  config: Pick<
    Config,
    | 'SUPPLIER_TIMEOUT_MS'
    | 'ATTEMPT_STUCK_GRACE_MS'
    | 'ARTIFACT_DIR'
    | 'DATA_DIR'
    | 'DELIVERY_RESTATEMENT_DAYS'
    | 'SELLER_FINALIZATION_HOURS'
    | 'SELLER_MAX_VARIANCE_PERCENT'
    | 'SELLER_BILLING_TERMS'
    | 'ADCP_SELLERS'
    | 'HEARTBEAT_TTL_MS'
    | 'BROWSER_JOB_QUEUE_WAIT_MS'
    | 'CONTROL_TOLERANCE_PERCENT'
    | 'DELIVERY_PACING_TOLERANCE'
    | 'DELIVERY_POLL_EVERY_MS'
  >,
): Worker {
  return new Worker<unknown, unknown, string>(
    MAINTENANCE_QUEUE,
    // One housekeeping job at a time across every worker process, as a single process runs them.
    async (job) => runExclusively(connection, `${prefix}:housekeeping-lock`, () => runHousekeeping(job.name, job.id, job.data)),
    { connection, prefix: queuePrefix(prefix, MAINTENANCE_QUEUE), concurrency: 1 },
  );

  async function runHousekeeping(name: string, jobId: string | undefined, data: unknown): Promise<unknown> {
    switch (name) {
      case EVALUATE_RULES: {
        const { advertiserId } = EvaluateRulesJobSchema.parse(data ?? {});
        const result = await evaluateRules(db, {
          tolerance: config.DELIVERY_PACING_TOLERANCE,
          pollEveryMs: config.DELIVERY_POLL_EVERY_MS,
          logger,
          ...(advertiserId ? { advertiserId } : {}),
        });
        if (result.fired) logger.info({ ...result, advertiserId, jobId }, 'automatic rules fired');
        return result;
      }
      case 'purge-idempotency-records': {
        const purged = await purgeExpiredIdempotencyRecords(db);
        logger.info({ purged, jobId }, 'expired idempotency records purged');
        return { purged };
      }
      case 'retry-unsent': {
        const retried = await retryUnsent(db, queueFor, logger);
        const requeued = await requeueVanished(db, queueFor, logger);
        return { retried, requeued };
      }
      case 'sweep-stuck-attempts': {
        const swept = await sweepStuck(db, queueFor, logger, config);
        return { swept };
      }
      case 'rollup-pageviews': {
        // A day is finished only once every pageview accepted on it is stored.
        const now = new Date();
        const waiting = await oldestUnstoredPageviewAt(connection, prefix);
        const rolled = await rollUpPageviews(db, waiting && waiting < now ? waiting : now);
        return { rolled };
      }
      case 'prune-relayed-outbox': {
        const pruned = await pruneRelayedOutbox(db);
        logger.info({ pruned, jobId }, 'relayed outbox rows pruned');
        return { pruned };
      }
      case 'prune-webhook-record': {
        const pruned = await pruneWebhookRecord(db);
        logger.info({ pruned, jobId }, 'webhook events past retention pruned');
        return { pruned };
      }
      case 'purge-oauth-artifacts': {
        const purged = await purgeExpiredOauthArtifacts(db);
        logger.info({ purged, jobId }, 'expired authorization server artifacts purged');
        return { purged };
      }
      case 'sweep-artifact-retention': {
        const deleted = await sweepExpiredArtifacts(db, new ArtifactStore(artifactDirOf(config)));
        logger.info({ deleted, jobId }, 'study artifact bytes past retention deleted');
        return { deleted };
      }
      case 'closeout-bookings': {
        let closed = 0;
        for (const id of await closeoutDue(db, config.DELIVERY_RESTATEMENT_DAYS))
          if ((await closeOutBooking(db, id, { tolerancePercent: config.CONTROL_TOLERANCE_PERCENT })).closed) closed++;
        logger.info({ closed, jobId }, 'bookings closed out');
        return { closed };
      }
      case 'settle-finality': {
        // On each line's clock: a sandbox workspace's test clock moves its days and make-goods on.
        const finality = await sweepFinality(db, (key) => sellerBillingTerms(config, key));
        const expired = await expireMakegoods(db);
        logger.info({ ...finality, expired, jobId }, 'delivery finality settled');
        return { ...finality, expired };
      }
      case 'fail-unserved-browser-jobs': {
        const service = browserService(await freshHeartbeats(connection, prefix, config.HEARTBEAT_TTL_MS));
        if (service.running) return { failed: 0 };
        const failed = await failUnservedBrowserJobs(db, config.BROWSER_JOB_QUEUE_WAIT_MS, service.why);
        if (failed) logger.warn({ failed, why: service.why, jobId }, 'browser jobs no worker could run were ended');
        return { failed };
      }
      default:
        throw new Error(`unknown maintenance job ${name}`);
    }
  }
}
