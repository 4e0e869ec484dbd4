import fs from 'node:fs';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import type { Knex } from 'knex';
import { SYSTEM } from '../actor';
import type { AdapterContext, CreativeReviewer, ReviewOutcome } from '../adapters/adapter';
import type { Logger } from '../logger';
import { changeLine, lockLine } from '../bookings/line-transitions';
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
import { lineEnableable } from './creative-approvals';
import type { CreativeRef } from './creative-schemas';

export type ReviewResult = 'skipped' | 'approved' | 'rejected' | 'needs-resolution' | 'outcome-recorded-for-resolution';

const REDELIVERED = 'The review was interrupted after it was sent; its outcome is unknown.';

interface ReviewRow {
  id: string;
  creative_id: string;
  version: number;
  adapter_key: string;
  asset_fingerprint: string;
  metadata_digest: string;
  status: string;
}

interface ReviewStart {
  attemptId: string;
  review: ReviewRow;
  creative: { name: string; channel: string; format: string };
  version: { asset_name: string };
}

const lockReview = async (trx: Knex, id: string) =>
  (await trx('creative_reviews').where({ id }).forUpdate().first()) as ReviewRow | undefined;

/** The review's outcome is unknown: it is resolved by a person, never resubmitted. */
async function reviewInterrupted(trx: Knex, reviewId: string, reason: string): Promise<boolean> {
  const updated = await trx('creative_reviews')
    .where({ id: reviewId, status: 'in-flight' })
    .update({ status: 'needs-resolution', reasons: JSON.stringify([reason]), finished_at: trx.fn.now() });
  return updated > 0;
}

/**
 * Native staged lines waiting on this creative may become enableable once it is approved.
 * They change through changeLine like any line, in the global lock order: all the lines first
 * (by booking, then id), then each one's booking as it changes, so bookings too are locked in
 * id order, as a batch of worker steps locks them.
 */
async function refreshStagedLines(trx: Knex, creativeId: string): Promise<void> {
  const lines = await trx('booking_lines')
    .where({ adapter_key: 'native-staged', status: 'stopped', enableable: false })
    .whereRaw('creatives @> ?::jsonb', [JSON.stringify([{ id: creativeId }])])
    .orderBy(['booking_id', 'id'])
    .forUpdate()
    .select('id', 'booking_id');
  for (const { id, booking_id: bookingId } of lines) {
    const locked = await lockLine(trx, bookingId, id);
    if (!locked || locked.line.status !== 'stopped' || locked.line.enableable) continue;
    if (!(await lineEnableable(trx, locked.line as unknown as { adapter_key: string; creatives: CreativeRef[] }))) continue;
    await changeLine(trx, {
      bookingId,
      lineId: id,
      patch: { enableable: true },
      actor: SYSTEM,
      action: 'line.enableable',
      detail: { creativeId },
    });
  }
}

function reviewFlow(reviewer: CreativeReviewer, reviewId: string, opts: { assetDir: string; context: AdapterContext }) {
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

    async call({ attemptId, review, creative, version }) {
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
          assetFingerprint: review.asset_fingerprint,
          metadataDigest: review.metadata_digest,
        },
        opts.context,
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
      return (await settleReview(trx, start, outcome)) ?? flow.late(trx, start, outcome);
    },

    async late() {
      return 'outcome-recorded-for-resolution';
    },
  };
  return flow;
}

/** Moves an in-flight review to its outcome; null when it was no longer in flight. */
async function settleReview(trx: Knex, { review }: ReviewStart, outcome: ReviewOutcome | Unknown): Promise<ReviewResult | null> {
  const inFlight = () => trx('creative_reviews').where({ id: review.id, status: 'in-flight' });
  const finished = { finished_at: trx.fn.now() };
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
  await refreshStagedLines(trx, review.creative_id);
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
  opts: { assetDir: string; timeoutMs: number; context: AdapterContext; logger: Logger },
): Promise<ReviewResult> {
  return runSupplierCall(db, reviewFlow(reviewer, id, opts), { timeoutMs: opts.timeoutMs, logger: opts.logger, context: { reviewId: id } });
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
