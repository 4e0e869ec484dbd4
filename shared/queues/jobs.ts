import { z } from 'zod';
import { AUDIENCE_SYNC_QUEUE, creativeReviewQueueName, supplierQueueName } from './names';
import type { OutboxMessage } from '../outbox/outbox';

/**
 * The job contract between the API and the supplier workers. Payloads carry ids only:
 * job data sits in Redis in clear text.
 */
export const BookLineJobSchema = z.strictObject({ bookingId: z.uuid(), lineId: z.uuid() });
export type BookLineJob = z.infer<typeof BookLineJobSchema>;
export const BOOK_LINE = 'book-line';

/** Deterministic: relaying the same outbox row twice finds the job already there. */
export const bookLineJobId = (lineId: string) => `${BOOK_LINE}-${lineId}`;

export function bookLineMessage(adapterKey: string, job: BookLineJob): OutboxMessage {
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

export function audienceSyncMessage(job: AudienceSyncJob): OutboxMessage {
  return { queue: AUDIENCE_SYNC_QUEUE, jobName: AUDIENCE_SYNC, jobId: audienceSyncJobId(job.attemptId), payload: job };
}

/** Creative review: one review of one creative version by one adapter. */
export const CreativeReviewJobSchema = z.strictObject({ reviewId: z.uuid() });
export type CreativeReviewJob = z.infer<typeof CreativeReviewJobSchema>;
export const CREATIVE_REVIEW = 'review';
export const creativeReviewJobId = (reviewId: string) => `creative-review-${reviewId}`;

export function creativeReviewMessage(adapterKey: string, job: CreativeReviewJob): OutboxMessage {
  return { queue: creativeReviewQueueName(adapterKey), jobName: CREATIVE_REVIEW, jobId: creativeReviewJobId(job.reviewId), payload: job };
}
