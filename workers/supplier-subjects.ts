import { syncAttempts } from '../shared/audiences/sync-execution';
import { lineAttempts } from '../shared/bookings/line-execution';
import { reviewAttempts } from '../shared/creatives/review-execution';
import type { SubjectHandlers } from '../shared/suppliers/stuck-attempts';

/** Every kind of subject a supplier attempt can belong to, and how to take one over. */
export const SUBJECT_HANDLERS: SubjectHandlers = { line: lineAttempts, review: reviewAttempts, sync: syncAttempts };
