import { withTimeout } from '../timeout';
import fs from 'node:fs';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import type { Knex } from 'knex';
import { z } from 'zod';
import { badRequest, conflict, unprocessable } from '../errors';
import type { Principal } from '../auth/principal';
import { findAdapter } from '../adapters/catalogue';
import { requireSupplierAccess } from '../adapters/credentials';
import { UnknownOutcome, type AdapterContext, type CreativeReviewer, type ReviewOutcome } from '../adapters/adapter';
import { enqueueInTransaction } from '../outbox/outbox';
import { creativeReviewMessage } from '../queues/jobs';
import type { Logger } from '../logger';
import type { SubmitCreativeSchema } from './creative-schemas';
import { creativeView, loadCreativeForUpdate } from './creative-store';
import { lineEnableable } from './creative-approvals';

/**
 * Submits the creative's current version to a supplier for review, through the outbox.
 * A review whose outcome is unknown is reconciled, never resubmitted.
 */
export async function submitForReview(
  db: Knex,
  p: Principal,
  creativeId: string,
  body: z.infer<typeof SubmitCreativeSchema>,
  requestedBy: string,
) {
  return db.transaction(async (trx) => {
    const c = await loadCreativeForUpdate(trx, p, creativeId);
    if (body.channel && body.channel !== c.channel) {
      throw badRequest(
        `The creative is for ${c.channel}, not ${body.channel}.`,
        [{ path: 'body.channel', message: 'differs from the creative' }],
        'channel_mismatch',
      );
    }
    const adapter = findAdapter(body.adapterKey);
    if (!adapter)
      throw badRequest(
        `${body.adapterKey} is not a known supplier adapter.`,
        [{ path: 'body.adapterKey', message: 'unknown adapter' }],
        'unknown_adapter',
      );
    if (adapter.kind === 'workflow') throw unprocessable(`${adapter.key} does not review creatives.`, 'review_not_supported');
    if (!adapter.channels.includes(c.channel))
      throw unprocessable(`${adapter.key} does not run ${c.channel}.`, 'adapter_channel_unsupported');
    if (adapter.requiresCredential) await requireSupplierAccess(trx, adapter.key, p.advertiserId, 'Creative review');
    const version = await trx('creative_versions').where({ creative_id: creativeId, version: c.current_version }).first();
    const existing = await trx('creative_reviews')
      .where({ creative_id: creativeId, version: c.current_version, adapter_key: adapter.key })
      .whereIn('status', ['queued', 'in-flight', 'approved', 'needs-resolution'])
      .orderBy('created_at', 'desc')
      .first();
    if (existing?.status === 'needs-resolution') {
      throw conflict(
        'The last review of this version has an unknown outcome; it is reconciled, not resubmitted.',
        'review_needs_resolution',
        'terminal',
      );
    }
    // The same version with the same supplier is reviewed once: a repeat submission finds it.
    if (existing) return { review: existing as Record<string, unknown>, created: false, ...(await creativeView(trx, p, creativeId)) };
    const reviewId = randomUUID();
    await trx('creative_reviews').insert({
      id: reviewId,
      creative_id: creativeId,
      version: c.current_version,
      advertiser_id: p.advertiserId,
      adapter_key: adapter.key,
      channel: c.channel,
      asset_fingerprint: version.asset_fingerprint,
      metadata_digest: version.metadata_digest,
      requested_by: requestedBy,
    });
    await enqueueInTransaction(trx, [creativeReviewMessage(adapter.key, { reviewId })]);
    // Read as committed: the response says what this request did, however fast a worker is.
    const review: Record<string, unknown> = await trx('creative_reviews').where({ id: reviewId }).first();
    return { review, created: true, ...(await creativeView(trx, p, creativeId)) };
  });
}

export function reviewView(r: Record<string, unknown>) {
  return {
    id: r.id,
    creativeId: r.creative_id,
    version: r.version,
    adapterKey: r.adapter_key,
    status: r.status,
    assetFingerprint: r.asset_fingerprint,
    metadataDigest: r.metadata_digest,
    externalReference: r.external_reference ?? null,
    reasons: r.reasons ?? null,
    attemptId: r.attempt_id ?? null,
    createdAt: (r.created_at as Date).toISOString(),
  };
}

/** Native staged lines waiting on this creative may become enableable once it is approved. */
async function refreshStagedLines(trx: Knex, creativeId: string): Promise<void> {
  const lines = await trx('booking_lines')
    .where({ adapter_key: 'native-staged', status: 'stopped', enableable: false })
    .whereRaw('creatives @> ?::jsonb', [JSON.stringify([{ id: creativeId }])]);
  for (const line of lines) {
    if (await lineEnableable(trx, line))
      await trx('booking_lines')
        .where({ id: line.id })
        .update({ enableable: true, version: line.version + 1, updated_at: trx.fn.now() });
  }
}

export type ReviewResult = 'skipped' | 'approved' | 'rejected' | 'needs-resolution';

/**
 * The worker's side: commit the attempt, send the exact stored bytes, record the outcome.
 * A re-delivered job that finds its attempt in flight never sends again.
 */
export async function executeReview(
  db: Knex,
  reviewer: CreativeReviewer,
  reviewId: string,
  opts: { assetDir: string; timeoutMs: number; context: AdapterContext; logger: Logger },
): Promise<ReviewResult> {
  const start = await db.transaction(async (trx) => {
    const review = await trx('creative_reviews').where({ id: reviewId }).forUpdate().first();
    if (!review) return null;
    if (review.status === 'in-flight') {
      await trx('creative_reviews')
        .where({ id: reviewId })
        .update({
          status: 'needs-resolution',
          reasons: JSON.stringify(['The review was interrupted after it was sent; its outcome is unknown.']),
          finished_at: trx.fn.now(),
        });
      return 'needs-resolution' as const;
    }
    if (review.status !== 'queued') return null;
    const attemptId = `att_${randomUUID()}`;
    await trx('creative_reviews').where({ id: reviewId }).update({ status: 'in-flight', attempt_id: attemptId });
    const creative = await trx('creatives').where({ id: review.creative_id }).first();
    const version = await trx('creative_versions').where({ creative_id: review.creative_id, version: review.version }).first();
    return { review, attemptId, creative, version };
  });
  if (start === null) return 'skipped';
  if (start === 'needs-resolution') return 'needs-resolution';

  const { review, attemptId, creative, version } = start;
  let outcome: ReviewOutcome | 'unknown';
  try {
    const bytes = await fs.promises.readFile(path.join(opts.assetDir, version.asset_name));
    outcome = await withTimeout(
      reviewer.review(
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
      ),
      opts.timeoutMs,
      () => new UnknownOutcome(`no answer within ${opts.timeoutMs} ms`),
    );
  } catch (err) {
    if (!(err instanceof UnknownOutcome)) opts.logger.error({ err, reviewId }, 'creative review failed; outcome unknown');
    outcome = 'unknown';
  }

  return db.transaction(async (trx) => {
    const finished = { finished_at: trx.fn.now() };
    if (outcome === 'unknown') {
      await trx('creative_reviews')
        .where({ id: reviewId, status: 'in-flight' })
        .update({ status: 'needs-resolution', ...finished });
      return 'needs-resolution' as const;
    }
    if (outcome.kind === 'rejected') {
      await trx('creative_reviews')
        .where({ id: reviewId, status: 'in-flight' })
        .update({
          status: 'rejected',
          reasons: JSON.stringify(outcome.reasons),
          external_reference: outcome.externalReference,
          ...finished,
        });
      return 'rejected' as const;
    }
    await trx('creative_reviews')
      .where({ id: reviewId, status: 'in-flight' })
      .update({ status: 'approved', external_reference: outcome.externalReference, ...finished });
    const current = await trx('creatives').where({ id: review.creative_id }).first('current_version');
    await trx('creative_approvals').insert({
      id: randomUUID(),
      creative_id: review.creative_id,
      version: review.version,
      adapter_key: review.adapter_key,
      asset_fingerprint: review.asset_fingerprint,
      metadata_digest: review.metadata_digest,
      review_id: reviewId,
      external_reference: outcome.externalReference,
      // Revised while under review: the approval is on record but does not count for the new version.
      status: current.current_version === review.version ? 'valid' : 'superseded',
    });
    await refreshStagedLines(trx, review.creative_id);
    return 'approved' as const;
  });
}
