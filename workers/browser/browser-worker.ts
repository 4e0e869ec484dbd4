import fs from 'node:fs';
import os from 'node:os';
import { Worker } from 'bullmq';
import type { Knex } from 'knex';
import type { RedisClient } from '../../shared/redis';
import type { Config } from '../../shared/config/config';
import type { Logger } from '../../shared/logger';
import type { AssetStore } from '../../shared/assets/asset-store';
import { digestOf } from '../../shared/digest';
import { BROWSER_JOBS_QUEUE } from '../../shared/queues/names';
import { RunBrowserJobSchema, RUN_BROWSER_JOB } from '../../shared/queues/jobs';
import { browserJobOrigins } from '../../shared/bookings/browser-job-policy';
import { beginBrowserJob, completeBrowserJob, failAbandonedBrowserJobs, failBrowserJob } from '../../shared/bookings/browser-job-run';
import { preparationWorksheet } from '../../shared/bookings/browser-worksheet';
import type { BrowserEvidence } from '../../shared/bookings/browser-job-schemas';
import type { BrowserJobRow } from '../../shared/bookings/browser-jobs';
import type { BrowserJobLine } from '../../shared/bookings/line-terms';
import { supplierMutationOptions } from '../mutation-options';
import { visitPage, VisitFailure, type Visit } from './visit';

/**
 * Why this machine cannot run browser jobs, or null when it can: Chromium must be an executable
 * file at CHROMIUM_PATH. A process without one does not take browser jobs (another may).
 */
export async function browserMissing(chromiumPath: string): Promise<string | null> {
  try {
    const stat = await fs.promises.stat(chromiumPath);
    if (!stat.isFile()) return `CHROMIUM_PATH (${chromiumPath}) is not a file`;
    await fs.promises.access(chromiumPath, fs.constants.X_OK);
    return null;
  } catch {
    return `Chromium was not found at CHROMIUM_PATH (${chromiumPath}): install Debian's chromium package, set CHROMIUM_PATH, or leave the browser role off this process`;
  }
}

export interface BrowserWorker {
  worker: Worker;
  stop(): Promise<void>;
}

/**
 * Consumes the browser-jobs queue: each job runs once, in a Chromium of its own. Like supplier
 * mutations, a job is never retried (attempts: 1); one whose worker died is re-delivered once, and
 * that delivery ends it failed (`interrupted`) instead of running it again.
 */
export function browserWorker(deps: {
  connection: RedisClient;
  config: Config;
  db: Knex;
  logger: Logger;
  assets: AssetStore;
}): BrowserWorker {
  const { config, db, assets } = deps;
  const log = deps.logger.child({ queue: BROWSER_JOBS_QUEUE });
  const runBy = `${os.hostname()}:${process.pid}`;
  const policy = { allowLoopback: config.BROWSER_ALLOW_LOOPBACK };
  const worker = new Worker(
    BROWSER_JOBS_QUEUE,
    async (job) => {
      if (job.name !== RUN_BROWSER_JOB) throw new Error(`unknown browser job ${job.name}`);
      const { browserJobId } = RunBrowserJobSchema.parse(job.data);
      const start = await beginBrowserJob(db, browserJobId, runBy);
      if (start.kind !== 'run') {
        log.info({ jobId: job.id, browserJobId, result: start.kind }, 'browser job not run');
        return { result: start.kind };
      }
      try {
        const visit = await visitPage({
          chromiumPath: config.CHROMIUM_PATH,
          url: start.job.supplier_url,
          origins: browserJobOrigins(start.line.adapterKey, start.job.supplier_url, config.BROWSER_ALLOW_LOOPBACK),
          policy,
          limits: {
            timeoutMs: config.BROWSER_JOB_TIMEOUT_MS,
            maxBytes: config.BROWSER_JOB_MAX_BYTES,
            maxRequests: config.BROWSER_JOB_MAX_REQUESTS,
          },
          readFields: start.job.purpose === 'prepare',
        });
        const evidence = await storeEvidence(assets, start.job, start.line, visit);
        await completeBrowserJob(db, browserJobId, evidence);
        log.info(
          { jobId: job.id, browserJobId, evidenceDigest: evidence.digest, refused: evidence.requests.refused.length },
          'browser job completed',
        );
        return { result: 'completed' };
      } catch (err) {
        const failure =
          err instanceof VisitFailure ? err : new VisitFailure('internal_error', 'The job failed inside the worker; see its log.');
        if (!(err instanceof VisitFailure)) log.error({ err, browserJobId }, 'browser job failed inside the worker');
        await failBrowserJob(db, browserJobId, failure.code, failure.message);
        log.warn({ jobId: job.id, browserJobId, code: failure.code }, 'browser job failed');
        return { result: 'failed', code: failure.code };
      }
    },
    supplierMutationOptions(deps.connection, BROWSER_JOBS_QUEUE, config, config.BROWSER_JOB_CONCURRENCY),
  );
  // A run that died with its BullMQ job gone (a second stall, a flushed Redis) leaves its row running: ended here.
  const abandonedAfterMs = config.BROWSER_JOB_TIMEOUT_MS + 2 * config.WORKER_LOCK_DURATION_MS + 60_000;
  const sweep = setInterval(() => {
    failAbandonedBrowserJobs(db, abandonedAfterMs).catch((err) =>
      log.warn({ err: { message: (err as Error).message } }, 'sweep of abandoned browser jobs failed; will retry'),
    );
  }, 60_000);
  sweep.unref();
  return {
    worker,
    async stop() {
      clearInterval(sweep);
    },
  };
}

/** The artifacts go to the content-addressed store; the evidence names them by URL and SHA-256, bound to the line. */
async function storeEvidence(assets: AssetStore, job: BrowserJobRow, line: BrowserJobLine, visit: Visit): Promise<BrowserEvidence> {
  const shot = await assets.put(visit.screenshot.png, 'image/png');
  const textBytes = Buffer.from(visit.text.value, 'utf8');
  const text = await assets.put(textBytes, 'text/plain; charset=utf-8');
  const sha = (fingerprint: string) => fingerprint.replace(/^sha256:/, '');
  const body: Omit<BrowserEvidence, 'digest'> = {
    bookingId: job.booking_id,
    lineId: job.line_id,
    snapshotDigest: job.snapshot_digest,
    lineTermsDigest: job.line_terms_digest!,
    purpose: job.purpose,
    requestedUrl: visit.requestedUrl,
    finalUrl: visit.finalUrl,
    httpStatus: visit.httpStatus,
    title: visit.title,
    observedAt: visit.observedAt.toISOString(),
    screenshot: {
      url: shot.url,
      sha256: sha(shot.fingerprint),
      bytes: shot.sizeBytes,
      contentType: shot.contentType,
      width: visit.screenshot.width,
      height: visit.screenshot.height,
      truncated: visit.screenshot.truncated,
    },
    text: {
      url: text.url,
      sha256: sha(text.fingerprint),
      bytes: text.sizeBytes,
      contentType: text.contentType,
      characters: visit.text.value.length,
      truncated: visit.text.truncated,
    },
    requests: visit.requests,
    worksheet: job.purpose === 'prepare' ? preparationWorksheet(line, visit.fields) : null,
  };
  return { digest: digestOf(body), ...body };
}
