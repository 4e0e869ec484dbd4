import { UnknownOutcome } from '../../shared/adapters/adapter';
import type {
  AudienceSupplier,
  AudienceSupplierContext,
  AudienceSupplierFor,
  AudienceSyncOutcome,
  AudienceSyncRequest,
} from '../../shared/audiences/audience-supplier';
import { recordReceipt } from './sandbox-ledger';

/**
 * Deterministic sandbox audience endpoints. Like a payment provider's test card numbers, a
 * marker in the campaign's name picks the outcome (docs/audiences.md):
 *   [sync-reject] rejected with reasons · [sync-unknown] received, answer lost ·
 *   [sync-slow] waits SANDBOX_SLOW_MS, then synced · anything else synced.
 */
export const AUDIENCE_SYNC_TRIGGERS = { rejected: '[sync-reject]', unknown: '[sync-unknown]', slow: '[sync-slow]' } as const;

export type AudienceSandboxBehaviour = 'synced' | 'rejected' | 'unknown' | 'slow';

export function audienceSandboxBehaviour(campaignName: string): AudienceSandboxBehaviour {
  const name = campaignName.toLowerCase();
  if (name.includes(AUDIENCE_SYNC_TRIGGERS.rejected)) return 'rejected';
  if (name.includes(AUDIENCE_SYNC_TRIGGERS.unknown)) return 'unknown';
  if (name.includes(AUDIENCE_SYNC_TRIGGERS.slow)) return 'slow';
  return 'synced';
}

/** The supplier's receipt of the operation, in the sandbox ledger, before anything else happens. */
async function recordAudienceReceipt(
  ctx: AudienceSupplierContext,
  request: AudienceSyncRequest,
  outcome: AudienceSandboxBehaviour,
  reference: string | null,
) {
  await recordReceipt(ctx.db, {
    adapterKey: request.adapterKey,
    operation: 'audience-sync',
    idempotencyKey: request.attemptId,
    request,
    outcome,
    providerReference: reference,
  });
}

export function sandboxAudienceSupplier(adapterKey: string): AudienceSupplier {
  return {
    adapterKey,
    callsSupplier: true,
    async sync(request, ctx): Promise<AudienceSyncOutcome> {
      const behaviour = audienceSandboxBehaviour(request.campaignName);
      const reference = `sbx-aud-${request.channel}-${request.attemptId.slice(-12)}`;
      await recordAudienceReceipt(ctx, request, behaviour, behaviour === 'rejected' ? null : reference);
      switch (behaviour) {
        case 'rejected':
          return {
            kind: 'rejected',
            reasons: [
              'Sandbox supplier refused: the cohort is below the minimum matchable audience size.',
              'Sandbox supplier refused: the audience purpose is not permitted for this account.',
            ],
          };
        case 'unknown':
          throw new UnknownOutcome('Sandbox supplier received the audience sync but its answer was lost.');
        case 'slow':
          await new Promise((r) => setTimeout(r, ctx.sandboxSlowMs));
          return { kind: 'synced', providerReference: reference };
        default:
          return { kind: 'synced', providerReference: reference };
      }
    },
  };
}

/**
 * This deployment has no live supplier connection, so a live sync is refused definitively
 * before anything is sent: no audience can have been created.
 */
export function liveAudienceSupplier(adapterKey: string): AudienceSupplier {
  return {
    adapterKey,
    callsSupplier: false,
    async sync(): Promise<AudienceSyncOutcome> {
      return {
        kind: 'rejected',
        reasons: [`No live connection to ${adapterKey} is configured in this deployment; nothing was sent to the supplier.`],
      };
    },
  };
}

/** Sandbox syncs go to the deterministic sandbox endpoint; live ones are refused before sending. */
export const audienceSupplierFor: AudienceSupplierFor = (def) =>
  def.executionMode === 'live' ? liveAudienceSupplier(def.adapterKey) : sandboxAudienceSupplier(def.adapterKey);
