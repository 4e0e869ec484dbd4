import { createHash } from 'node:crypto';
import type { AdapterContext, CreativeReviewer, ReviewOutcome, ReviewRequest } from '../../shared/adapters/adapter';
import { UnknownOutcome } from '../../shared/adapters/adapter';
import { recordReceipt } from './sandbox-ledger';

/**
 * Deterministic sandbox creative review. The creative's name picks the outcome (docs/creatives.md):
 *   contains "review-reject" → rejected with reasons · "review-unknown" → received, answer lost ·
 *   "review-slow" → waits SANDBOX_SLOW_MS, then approved · anything else → approved.
 */
export function sandboxReviewer(adapterKey: string): CreativeReviewer {
  return {
    async review(request: ReviewRequest, ctx: AdapterContext): Promise<ReviewOutcome> {
      const received = `sha256:${createHash('sha256').update(request.bytes).digest('hex')}`;
      const reference = `sbx-review-${adapterKey}-${request.attemptId.slice(-12)}`;
      const behaviour = request.name.includes('review-reject')
        ? 'rejected'
        : request.name.includes('review-unknown')
          ? 'unknown'
          : request.name.includes('review-slow')
            ? 'slow'
            : 'approved';
      const { bytes: _bytes, ...withoutBytes } = request;
      void _bytes;
      await recordReceipt(ctx.db, {
        adapterKey,
        operation: 'creative-review',
        idempotencyKey: request.attemptId,
        request: { ...withoutBytes, receivedFingerprint: received, bytes: request.bytes.length },
        outcome: behaviour,
        providerReference: behaviour === 'unknown' ? null : reference,
      });
      if (received !== request.assetFingerprint)
        return { kind: 'rejected', reasons: ['The file received does not match its fingerprint.'], providerReference: reference };
      switch (behaviour) {
        case 'rejected':
          return {
            kind: 'rejected',
            reasons: ['Claims need substantiation.', 'End frame must show the legal line for 2 seconds.'],
            providerReference: reference,
          };
        case 'unknown':
          throw new UnknownOutcome('Sandbox reviewer received the creative but its answer was lost.');
        case 'slow':
          await new Promise((r) => setTimeout(r, ctx.sandboxSlowMs));
          return { kind: 'approved', providerReference: reference };
        default:
          return { kind: 'approved', providerReference: reference };
      }
    },
  };
}

/** Live reviewers: no live connection is configured here, so nothing is sent and the review is refused. */
export const liveReviewer: CreativeReviewer = {
  async review(): Promise<ReviewOutcome> {
    return {
      kind: 'rejected',
      reasons: ['No live connection to this supplier is configured in this deployment; nothing was sent.'],
      providerReference: null,
    };
  },
};
