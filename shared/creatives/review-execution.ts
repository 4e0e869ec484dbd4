import fs from 'node:fs';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import type { Knex } from 'knex';
import { recordEvent } from '../events/record';
import type { AdapterContext, CreativeReviewer, ReviewOutcome } from '../adapters/adapter';
import type { Logger } from '../logger';
import { creativeCopyOf } from './creative-store';
import { creativeReviewJobId } from '../queues/jobs';
import { creativeReviewQueueName } from '../queues/names';
import {
  findOpenAttempt,
  closeAttempt,
  interrupted,
  isUnknown,
  openAttempt,
  runSupplierCall,
  type SupplierCallFlow,
  type Unknown,
} from '../suppliers/attempts';
import type { SubjectHandler } from '../suppliers/stuck-attempts';

export type ReviewResult = 'skipped' | 'approved' | 'rejected' | 'at-supplier' | 'needs-resolution' | 'outcome-recorded-for-resolution';

const REDELIVERED = 'The review was interrupted after it was sent; its outcome is unknown.';

export interface ReviewRow {
  id: string;
  advertiser_id: string;
  creative_id: string;
  version: number;
  adapter_key: string;
  asset_fingerprint: string;
  metadata_digest: string;
  status: string;
  attempt_id: string | null;
  /** Since when the supplier holds it to decide later (`at-supplier`). */
  at_supplier_since: Date | null;
}

interface ReviewStart {
  attemptId: string;
  review: ReviewRow;
  creative: { name: string; channel: string; format: string };
  version: { asset_name: string; content_type: string; copy_text: string; audio_delivery: unknown; delivery: unknown };
}

export const lockReview = async (trx: Knex, id: string) =>
  (await trx('creative_reviews').where({ id }).forUpdate().first()) as ReviewRow | undefined;

/** The review's outcome is unknown: it is resolved by a person, never resubmitted. */
async function reviewInterrupted(trx: Knex, reviewId: string, reason: string): Promise<boolean> {
  const updated = await trx('creative_reviews')
    .where({ id: reviewId, status: 'in-flight' })
    .update({ status: 'needs-resolution', reasons: JSON.stringify([reason]), finished_at: trx.fn.now() });
  return updated > 0;
}

/**
 * What must follow a creative's approval in the transaction that records it (native staged
 * lines waiting on it may become enableable): given by the composition root, so reviews need
 * not know the bookings that use their creatives.
 */
export type AfterApproval = (trx: Knex, creativeId: string) => Promise<void>;

function reviewFlow(
  reviewer: CreativeReviewer,
  reviewId: string,
  opts: { assetDir: string; context: AdapterContext; afterApproval: AfterApproval },
) {
  const flow: SupplierCallFlow<ReviewStart, ReviewOutcome, ReviewResult> = {
    async begin(trx) {
      const review = await lockReview(trx, reviewId);
      if (!review) return { kind: 'done', result: 'skipped' };
      if (review.status === 'in-flight') {
        // A re-delivery: the supplier may have the bytes already. Never send again.
        const open = await findOpenAttempt(trx, 'review', reviewId);
        if (open) await closeAttempt(trx, open.id, interrupted(REDELIVERED, 'redelivered'));
        await reviewInterrupted(trx, reviewId, REDELIVERED);
        return { kind: 'done', result: 'needs-resolution' };
      }
      if (review.status !== 'queued') return { kind: 'done', result: 'skipped' };
      const attemptId = await openAttempt(trx, {
        subjectKind: 'review',
        subjectId: reviewId,
        adapterKey: review.adapter_key,
        operation: 'review',
      });
      await trx('creative_reviews').where({ id: reviewId }).update({ status: 'in-flight', attempt_id: attemptId });
      const creative = await trx('creatives').where({ id: review.creative_id }).first();
      const version = await trx('creative_versions').where({ creative_id: review.creative_id, version: review.version }).first();
      return { kind: 'call', start: { attemptId, review, creative, version } };
    },

    async call({ attemptId, review, creative, version }, deadline) {
      const bytes = await fs.promises.readFile(path.join(opts.assetDir, version.asset_name));
      return reviewer.review(
        {
          attemptId,
          reviewId,
          creativeId: review.creative_id,
          version: review.version,
          name: creative.name,
          channel: creative.channel,
          format: creative.format,
          bytes,
          assetName: version.asset_name,
          contentType: version.content_type,
          assetFingerprint: review.asset_fingerprint,
          metadataDigest: review.metadata_digest,
          copy: creativeCopyOf(version),
        },
        { ...opts.context, ...deadline },
      );
    },

    async lock(trx) {
      await lockReview(trx, reviewId);
    },

    closeWith(outcome) {
      if (isUnknown(outcome)) return { status: 'unknown', detail: { cause: outcome.cause } };
      return { status: outcome.kind, providerReference: outcome.providerReference, detail: outcome };
    },

    async apply(trx, start, outcome) {
      return (await settleReview(trx, start, outcome, opts.afterApproval)) ?? flow.late(trx, start, outcome);
    },

    async late() {
      return 'outcome-recorded-for-resolution';
    },
  };
  return flow;
}

/** The review's end, told to subscribers in the transaction that records it. */
const reviewCompleted = (trx: Knex, review: ReviewStart['review'], status: 'approved' | 'rejected') =>
  recordEvent(trx, {
    workspaceId: review.advertiser_id,
    type: 'creative.review.completed',
    subjectId: review.id,
    subjectVersion: 1,
    body: { reviewId: review.id, creativeId: review.creative_id, creativeVersion: review.version, adapterKey: review.adapter_key, status },
  });

/**
 * Moves a review to its outcome, from where it waits: in flight (the supplier's answer to the
 * review itself) or at the supplier (its later verdict). Null when it no longer waited there.
 */
export async function settleReview(
  trx: Knex,
  { review }: Pick<ReviewStart, 'review'>,
  outcome: ReviewOutcome | Unknown,
  afterApproval: AfterApproval,
  from: 'in-flight' | 'at-supplier' = 'in-flight',
): Promise<ReviewResult | null> {
  const inFlight = () => trx('creative_reviews').where({ id: review.id, status: from });
  const finished = { finished_at: trx.fn.now() };
  if (!isUnknown(outcome) && outcome.kind === 'pending') {
    if (from === 'at-supplier') return 'at-supplier';
    // The supplier decides later: it is asked again on a schedule (reviews-at-supplier.ts).
    const n = await inFlight().update({
      status: 'at-supplier',
      provider_reference: outcome.providerReference,
      at_supplier_since: trx.fn.now(),
      next_check_at: trx.fn.now(),
    });
    return n ? 'at-supplier' : null;
  }
  if (isUnknown(outcome)) {
    const n = await inFlight().update({ status: 'needs-resolution', reasons: JSON.stringify([outcome.cause]), ...finished });
    return n ? 'needs-resolution' : null;
  }
  if (outcome.kind === 'rejected') {
    const n = await inFlight().update({
      status: 'rejected',
      reasons: JSON.stringify(outcome.reasons),
      provider_reference: outcome.providerReference,
      ...finished,
    });
    if (n) await reviewCompleted(trx, review, 'rejected');
    return n ? 'rejected' : null;
  }
  const n = await inFlight().update({ status: 'approved', provider_reference: outcome.providerReference, ...finished });
  // No approval without the review that earned it.
  if (!n) return null;
  const current = await trx('creatives').where({ id: review.creative_id }).first('current_version');
  await trx('creative_approvals').insert({
    id: randomUUID(),
    creative_id: review.creative_id,
    version: review.version,
    adapter_key: review.adapter_key,
    asset_fingerprint: review.asset_fingerprint,
    metadata_digest: review.metadata_digest,
    review_id: review.id,
    provider_reference: outcome.providerReference,
    // Revised while under review: the approval is on record but does not count for the new version.
    status: current.current_version === review.version ? 'valid' : 'superseded',
  });
  await afterApproval(trx, review.creative_id);
  await reviewCompleted(trx, review, 'approved');
  return 'approved';
}

/**
 * The worker's side of a creative review, through the supplier-call engine: commit the
 * attempt, send the exact stored bytes, record the outcome. A re-delivered job that finds its
 * attempt in flight never sends again.
 */
export function executeReview(
  db: Knex,
  reviewer: CreativeReviewer,
  id: string,
  opts: {
    assetDir: string;
    timeoutMs: number;
    lateAnswerMs?: number;
    context: AdapterContext;
    logger: Logger;
    afterApproval: AfterApproval;
  },
): Promise<ReviewResult> {
  return runSupplierCall(db, reviewFlow(reviewer, id, opts), {
    timeoutMs: opts.timeoutMs,
    lateAnswerMs: opts.lateAnswerMs,
    logger: opts.logger,
    context: { reviewId: id },
  });
}

/** How the stuck-attempt sweep takes over a review attempt. */
export const reviewAttempts: SubjectHandler = {
  async lock(trx, a) {
    await lockReview(trx, a.subject_id);
  },
  async interrupted(trx, a, reason) {
    await reviewInterrupted(trx, a.subject_id, reason);
  },
  job: (a) => ({ queue: creativeReviewQueueName(a.adapter_key), jobId: creativeReviewJobId(a.subject_id) }),
};
