import type { AdapterContext, CreativeReviewer, ReviewAtSupplier, ReviewOutcome, ReviewRequest } from '../../../shared/adapters/adapter';
import { UnknownOutcome } from '../../../shared/adapters/adapter';
import { sellerAccountOf } from '../../../shared/adapters/credentials';
import { accountRef } from '../../../shared/adapters/adcp/account-ref';
import type { AdcpSellerConnection } from '../../../shared/adapters/adcp/connection';
import { creativeManifest } from '../../../shared/adapters/adcp/creative-manifest';
import { probeMedia } from '../../../shared/assets/media-probe';

interface SyncRow {
  creative_id?: string;
  action?: string;
  status?: string;
  errors?: Array<{ code?: string; message?: string }>;
}

export interface ReviewDeps {
  /** This service's public address (PUBLIC_BASE_URL): the seller fetches the asset from there. */
  publicBaseUrl?: string | null;
}

/**
 * The seller's review of a creative version is sync_creatives, keyed by the review's attempt id:
 * the version is the seller's creative `<creative id>-v<version>` in the creative's format (the
 * seller's format of that id), its media a URL asset on our immutable asset address in the
 * format's slot. Approved when the seller says so; anything it refuses is rejected with its
 * reasons; a creative it holds for review is pending, and `check` (list_creatives) follows it up.
 */
export function adcpReviewer(connection: AdcpSellerConnection, deps: ReviewDeps = {}): CreativeReviewer {
  return {
    async review(request: ReviewRequest, ctx: AdapterContext): Promise<ReviewOutcome> {
      const row = (await ctx.db('creatives').where({ id: request.creativeId }).first('advertiser_id')) as
        { advertiser_id: string } | undefined;
      const account = row ? await sellerAccountOf(ctx.db, connection.adapterKey, row.advertiser_id) : null;
      const refused = (reason: string): ReviewOutcome => ({ kind: 'rejected', reasons: [reason], providerReference: null });
      if (!account) return refused(`The workspace has no approved account on ${connection.adapterKey}; nothing was sent.`);
      if (!deps.publicBaseUrl) {
        return refused('Flightdeck has no public address (PUBLIC_BASE_URL) the seller could fetch the asset from; nothing was sent.');
      }
      const format = (await connection.creativeFormats()).find((f) => f.format_id.id === request.format) ?? null;
      const manifest = creativeManifest(
        request.format,
        format,
        {
          url: `${deps.publicBaseUrl.replace(/\/$/, '')}/files/assets/${request.assetName}`,
          contentType: request.contentType,
          sizeBytes: request.bytes.length,
          facts: await probeMedia(request.bytes, request.contentType),
        },
        request.copy,
      );
      if ('refusal' in manifest) return refused(manifest.refusal);
      const sellerCreativeId = `${request.creativeId}-v${request.version}`;
      const result = await connection.call(
        (c) =>
          c.syncCreatives({
            idempotency_key: request.attemptId,
            account: accountRef(account, connection.mode),
            creatives: [
              {
                creative_id: sellerCreativeId,
                name: request.name,
                format_id: { agent_url: format?.format_id.agent_url ?? new URL(connection.seller.agentUrl).origin, id: request.format },
                assets: manifest.assets,
              },
            ],
          } as never),
        { signal: ctx.cut },
      );
      if (result.status === 'failed') {
        if (!result.adcpError) throw new UnknownOutcome(`The seller's answer to the review was lost: ${result.error}`);
        return { kind: 'rejected', reasons: [`${result.adcpError.code}: ${result.adcpError.message}`], providerReference: null };
      }
      // Taken to work on later: the creative is ours by id, so list_creatives follows it up.
      if (result.status === 'submitted' || result.status === 'working') {
        return { kind: 'pending', providerReference: sellerCreativeId, supplierStatus: result.status };
      }
      if (result.status !== 'completed') throw new UnknownOutcome(`The seller answered the review ${result.status}; not known yet.`);
      const rows = (result.data as { creatives?: SyncRow[] }).creatives ?? [];
      const mine = rows[0];
      if (!mine) return { kind: 'rejected', reasons: ['The seller returned no result for the creative.'], providerReference: null };
      const reference = mine.creative_id ?? sellerCreativeId;
      if (mine.status === 'approved') return { kind: 'approved', providerReference: reference };
      if (mine.status === 'rejected' || mine.action === 'failed') {
        const reasons = (mine.errors ?? []).map((e) => `${e.code ?? 'REJECTED'}: ${e.message ?? ''}`);
        return {
          kind: 'rejected',
          reasons: reasons.length ? reasons : ['The seller rejected the creative.'],
          providerReference: reference,
        };
      }
      if (mine.status && UNDECIDED.has(mine.status)) return { kind: 'pending', providerReference: reference, supplierStatus: mine.status };
      throw new UnknownOutcome(`The seller holds the creative as ${mine.status ?? 'unknown'}; its review is not finished.`);
    },

    // The seller's verdict on a creative it holds for review, as list_creatives shows it now.
    async check(review: ReviewAtSupplier, ctx: AdapterContext): Promise<ReviewOutcome> {
      const account = await sellerAccountOf(ctx.db, connection.adapterKey, review.advertiserId);
      if (!account) throw new UnknownOutcome(`The workspace no longer has an approved account on ${connection.adapterKey}.`);
      const result = await connection.call(
        (c) =>
          c.listCreatives({
            account: accountRef(account, connection.mode),
            filters: { creative_ids: [review.providerReference] },
          } as never),
        { signal: ctx.cut },
      );
      if (result.status !== 'completed') throw new Error(`list_creatives answered ${result.status}: ${result.error ?? ''}`);
      const held = ((result.data as { creatives?: Array<{ creative_id: string; status?: string }> }).creatives ?? []).find(
        (c) => c.creative_id === review.providerReference,
      );
      // Not listed yet: a sync the seller took to work on may not have made it.
      if (!held?.status || UNDECIDED.has(held.status)) {
        return { kind: 'pending', providerReference: review.providerReference, supplierStatus: held?.status ?? 'not listed yet' };
      }
      if (held.status === 'approved') return { kind: 'approved', providerReference: review.providerReference };
      return {
        kind: 'rejected',
        reasons: [`The seller's review ended ${held.status} (list_creatives gives no reason).`],
        providerReference: review.providerReference,
      };
    },
  };
}

/** A creative the seller has not decided on: it holds it for review, or is still processing it. */
const UNDECIDED = new Set(['pending_review', 'processing']);
