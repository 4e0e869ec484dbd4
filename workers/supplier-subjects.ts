import { syncAttempts } from '../shared/audiences/sync-execution';
import { lineAttempts } from '../shared/bookings/lines/flow';
import { unsentBookings, unsentLineOperations } from '../shared/bookings/lines/unsent';
import { reviewAttempts } from '../shared/creatives/review-execution';
import {
  AUDIENCE_SYNC,
  CREATIVE_REVIEW,
  RUN_BROWSER_JOB,
  audienceSyncMessage,
  browserJobMessage,
  creativeReviewMessage,
} from '../shared/queues/jobs';
import { AUDIENCE_SYNC_QUEUE, BROWSER_JOBS_QUEUE, CREATIVE_REVIEW_QUEUES } from '../shared/queues/names';
import type { SubjectHandlers } from '../shared/suppliers/stuck-attempts';
import { queuedRows, type UnsentWork } from '../shared/suppliers/unsent-work';

/** Every kind of subject a supplier attempt can belong to, and how to take one over. */
export const SUBJECT_HANDLERS: SubjectHandlers = { line: lineAttempts, review: reviewAttempts, sync: syncAttempts };

/**
 * Every kind of supplier work that waits before anything is sent, as the sweeps that recover
 * lost jobs ask it: a new kind is recovered by both once it is listed here.
 */
export const UNSENT_WORK: readonly UnsentWork[] = [
  unsentBookings,
  unsentLineOperations,
  queuedRows('creative_reviews', ['adapter_key'], {
    jobName: CREATIVE_REVIEW,
    queues: CREATIVE_REVIEW_QUEUES,
    idOf: (d) => d.reviewId!,
    message: (r) => creativeReviewMessage(String(r.adapter_key), { reviewId: String(r.id) }),
  }),
  queuedRows('cohort_sync_attempts', ['cohort_id'], {
    jobName: AUDIENCE_SYNC,
    queues: [AUDIENCE_SYNC_QUEUE],
    idOf: (d) => d.attemptId!,
    message: (r) => audienceSyncMessage({ cohortId: String(r.cohort_id), attemptId: String(r.id) }),
  }),
  // A browser job that started is never run again, whatever became of it.
  queuedRows('browser_jobs', [], {
    jobName: RUN_BROWSER_JOB,
    queues: [BROWSER_JOBS_QUEUE],
    idOf: (d) => d.browserJobId!,
    message: (r) => browserJobMessage({ browserJobId: String(r.id) }),
  }),
];
