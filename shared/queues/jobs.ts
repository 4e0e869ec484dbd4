import { z } from 'zod';
import { AUDIENCE_SYNC_QUEUE, BROWSER_JOBS_QUEUE, MAINTENANCE_QUEUE, creativeReviewQueueName, supplierQueueName } from './names';

/** A job to add to a queue: which queue, the job's name, its deterministic id and its payload (ids only). */
export interface JobMessage {
  queue: string;
  jobName: string;
  jobId: string;
  payload: Record<string, unknown>;
}

/**
 * The job contract between the API and the supplier workers. Payloads carry ids only:
 * job data sits in Redis in clear text.
 */
export const BookLineJobSchema = z.strictObject({ bookingId: z.uuid(), lineId: z.uuid() });
export type BookLineJob = z.infer<typeof BookLineJobSchema>;
export const BOOK_LINE = 'book-line';

/** Deterministic: relaying the same outbox row twice finds the job already there. */
export const bookLineJobId = (lineId: string) => `${BOOK_LINE}-${lineId}`;

export function bookLineMessage(adapterKey: string, job: BookLineJob): JobMessage {
  return { queue: supplierQueueName(adapterKey), jobName: BOOK_LINE, jobId: bookLineJobId(job.lineId), payload: job };
}

export const PersonaExtractJobSchema = z.strictObject({ requestId: z.uuid() });
export type PersonaExtractJob = z.infer<typeof PersonaExtractJobSchema>;
export const PERSONA_EXTRACT = 'extract';
export const personaExtractJobId = (requestId: string) => `persona-extract-${requestId}`;

/** Audience sync: one attempt of one cohort. */
export const AudienceSyncJobSchema = z.strictObject({ cohortId: z.uuid(), attemptId: z.uuid() });
export type AudienceSyncJob = z.infer<typeof AudienceSyncJobSchema>;
export const AUDIENCE_SYNC = 'sync';
export const audienceSyncJobId = (attemptId: string) => `audience-sync-${attemptId}`;

export function audienceSyncMessage(job: AudienceSyncJob): JobMessage {
  return { queue: AUDIENCE_SYNC_QUEUE, jobName: AUDIENCE_SYNC, jobId: audienceSyncJobId(job.attemptId), payload: job };
}

/** Creative review: one review of one creative version by one adapter. */
export const CreativeReviewJobSchema = z.strictObject({ reviewId: z.uuid() });
export type CreativeReviewJob = z.infer<typeof CreativeReviewJobSchema>;
export const CREATIVE_REVIEW = 'review';
export const creativeReviewJobId = (reviewId: string) => `creative-review-${reviewId}`;

export function creativeReviewMessage(adapterKey: string, job: CreativeReviewJob): JobMessage {
  return { queue: creativeReviewQueueName(adapterKey), jobName: CREATIVE_REVIEW, jobId: creativeReviewJobId(job.reviewId), payload: job };
}

/** An operation asked of a booked line (pause, resume, stop, budget change), on its supplier's queue. */
export const LineOperationJobSchema = z.strictObject({ bookingId: z.uuid(), lineId: z.uuid(), operationId: z.uuid() });
export type LineOperationJob = z.infer<typeof LineOperationJobSchema>;
export const LINE_OPERATION = 'line-operation';
export const lineOperationJobId = (operationId: string) => `${LINE_OPERATION}-${operationId}`;

export function lineOperationMessage(adapterKey: string, job: LineOperationJob): JobMessage {
  return { queue: supplierQueueName(adapterKey), jobName: LINE_OPERATION, jobId: lineOperationJobId(job.operationId), payload: job };
}

/**
 * Delivery polling, on each supplier's own queue: a job scheduler runs it for every running line
 * of that supplier; moving a workspace's sandbox clock asks for that workspace's lines at once.
 */
export const DeliveryPollJobSchema = z.strictObject({ advertiserId: z.string().min(1).max(200).optional() });
export type DeliveryPollJob = z.infer<typeof DeliveryPollJobSchema>;
export const POLL_DELIVERY = 'poll-delivery';

export function deliveryPollMessage(adapterKey: string, advertiserId: string, at: Date): JobMessage {
  return {
    queue: supplierQueueName(adapterKey),
    jobName: POLL_DELIVERY,
    jobId: `${POLL_DELIVERY}-${advertiserId}-${at.getTime()}`,
    payload: { advertiserId },
  };
}

/**
 * An evaluation cycle of the automatic rules, on the maintenance queue: after each delivery poll
 * (of one workspace when its sandbox clock moved), and on a schedule. Safe to run twice: a rule
 * fires once per subject and evaluation day.
 */
export const EvaluateRulesJobSchema = z.strictObject({ advertiserId: z.string().min(1).max(200).optional() });
export const EVALUATE_RULES = 'evaluate-rules';

export function ruleEvaluationMessage(advertiserId: string | undefined, at: Date): JobMessage {
  return {
    queue: MAINTENANCE_QUEUE,
    jobName: EVALUATE_RULES,
    // Every supplier's scheduled poll asks for one cycle of all rules a minute, however many there are.
    jobId: advertiserId
      ? `${EVALUATE_RULES}-${advertiserId}-${at.getTime()}`
      : `${EVALUATE_RULES}-all-${Math.floor(at.getTime() / 60_000)}`,
    payload: advertiserId ? { advertiserId } : {},
  };
}

/** A browser job: one supervised, read-only visit of a supplier's site, run once. */
export const RunBrowserJobSchema = z.strictObject({ browserJobId: z.uuid() });
export type RunBrowserJob = z.infer<typeof RunBrowserJobSchema>;
export const RUN_BROWSER_JOB = 'browser-job';
export const browserJobRunId = (browserJobId: string) => `browser-job-${browserJobId}`;

export function browserJobMessage(job: RunBrowserJob): JobMessage {
  return { queue: BROWSER_JOBS_QUEUE, jobName: RUN_BROWSER_JOB, jobId: browserJobRunId(job.browserJobId), payload: job };
}
