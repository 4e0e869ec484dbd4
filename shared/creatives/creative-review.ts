import { randomUUID } from 'node:crypto';
import type { Knex } from 'knex';
import { z } from 'zod';
import { badRequest, conflict, unprocessable } from '../errors';
import type { Principal } from '../auth/principal';
import { findAdapter } from '../adapters/catalogue';
import { requireSupplierAccess } from '../adapters/credentials';
import { enqueueInTransaction } from '../outbox/outbox';
import { creativeReviewMessage } from '../queues/jobs';
import type { SubmitCreativeSchema } from './creative-schemas';
import { creativeView, loadCreativeForUpdate } from './creative-store';

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
      throw unprocessable(`${adapter.key} does not run ${c.channel}.`, 'adapter_channel_unsupported', 'correctable');
    if (adapter.requiresCredential) await requireSupplierAccess(trx, adapter.key, p.advertiserId, 'Creative review');
    const version = await trx('creative_versions').where({ creative_id: creativeId, version: c.current_version }).first();
    const existing = await trx('creative_reviews')
      .where({ creative_id: creativeId, version: c.current_version, adapter_key: adapter.key })
      .whereIn('status', ['queued', 'in-flight', 'at-supplier', 'approved', 'needs-resolution'])
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
    if (existing) {
      return { review: existing as Record<string, unknown>, created: false, queued: [], ...(await creativeView(trx, p, creativeId)) };
    }
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
    const queued = [creativeReviewMessage(adapter.key, { reviewId })];
    await enqueueInTransaction(trx, queued);
    // Read as committed: the response says what this request did, however fast a worker is.
    const review: Record<string, unknown> = await trx('creative_reviews').where({ id: reviewId }).first();
    return { review, created: true, queued, ...(await creativeView(trx, p, creativeId)) };
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
    providerReference: r.provider_reference ?? null,
    reasons: r.reasons ?? null,
    attemptId: r.attempt_id ?? null,
    createdAt: (r.created_at as Date).toISOString(),
  };
}
