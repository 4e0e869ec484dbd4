import type { Knex } from 'knex';
import { claimDue, type DueTable } from '../db/claim-due';
import type { ReviewAtSupplier, ReviewOutcome } from '../adapters/adapter';
import { isUnknown, type Unknown } from '../suppliers/attempts';
import { lockReview, settleReview, type AfterApproval, type ReviewResult } from './review-execution';

/**
 * Creative reviews a supplier holds to decide later (AdCP `pending_review`). The review waits
 * `at-supplier` and is asked about on a schedule: a review is claimed by moving its
 * `next_check_at` an interval on, so two checkers never ask at once and a checker that dies
 * leaves it due again. The verdict settles it as the review's own answer would have, and closes
 * the review's attempt. A supplier that has not decided within `maxWaitMs` hands it to a person.
 */
export interface ReviewAtSupplierRow {
  id: string;
  creative_id: string;
  version: number;
  advertiser_id: string;
  provider_reference: string;
  at_supplier_since: Date | null;
}

export const reviewAtSupplierOf = (r: ReviewAtSupplierRow): ReviewAtSupplier => ({
  reviewId: r.id,
  creativeId: r.creative_id,
  version: r.version,
  advertiserId: r.advertiser_id,
  providerReference: r.provider_reference,
});

const REVIEWS_AT_SUPPLIER: DueTable = {
  table: 'creative_reviews',
  id: 'id',
  waiting: 'at-supplier',
  dueAt: 'next_check_at',
  count: 'checks',
};

/** Claims up to `limit` of an adapter's reviews due a check; the next check is an interval away. */
export const claimReviewsAtSupplier = (db: Knex, adapterKey: string, intervalMs: number, limit = 20) =>
  claimDue<ReviewAtSupplierRow>(
    db,
    REVIEWS_AT_SUPPLIER,
    ['id', 'creative_id', 'version', 'advertiser_id', 'provider_reference', 'at_supplier_since'],
    adapterKey,
    intervalMs,
    limit,
  );

/** The supplier's word on a review it holds: a verdict settles it; `pending` keeps it waiting, up to `maxWaitMs`. */
export async function settleReviewAtSupplier(
  db: Knex,
  reviewId: string,
  outcome: ReviewOutcome | Unknown,
  opts: { afterApproval: AfterApproval; maxWaitMs: number },
): Promise<ReviewResult> {
  return db.transaction(async (trx) => {
    const review = await lockReview(trx, reviewId);
    if (!review || review.status !== 'at-supplier') return 'skipped';
    const waited = Date.now() - (review.at_supplier_since ?? new Date()).getTime();
    if (isUnknown(outcome) || (outcome.kind === 'pending' && waited > opts.maxWaitMs)) {
      const reason = isUnknown(outcome)
        ? outcome.cause
        : `The supplier has not decided in ${Math.round(waited / 3_600_000)} hours (it says ${outcome.supplierStatus}).`;
      await trx('creative_reviews')
        .where({ id: reviewId, status: 'at-supplier' })
        .update({ status: 'needs-resolution', reasons: JSON.stringify([reason]), finished_at: trx.fn.now() });
      return 'needs-resolution';
    }
    const result = (await settleReview(trx, { review }, outcome, opts.afterApproval, 'at-supplier')) ?? 'skipped';
    if (result === 'approved' || result === 'rejected') {
      if (review.attempt_id) {
        await trx('supplier_attempts')
          .where({ id: review.attempt_id, status: 'pending' })
          .update({ status: result, detail: JSON.stringify(outcome), finished_at: trx.fn.now() });
      }
    }
    return result;
  });
}
