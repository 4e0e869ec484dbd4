import { syncAttempts } from '../audiences/sync-execution';
import { lineAttempts } from '../bookings/line-execution';
import { reviewAttempts } from '../creatives/review-execution';
import type { SubjectHandlers } from './stuck-attempts';

/** Every kind of subject a supplier attempt can belong to, and how to take one over. */
export const SUBJECT_HANDLERS: SubjectHandlers = { line: lineAttempts, review: reviewAttempts, sync: syncAttempts };
