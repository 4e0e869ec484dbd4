import type { Knex } from 'knex';
import type { Channel } from '../auth/products';

/** What a worker sends a supplier to sync one cohort. `attemptId` is the supplier's idempotency key. */
export interface AudienceSyncRequest {
  attemptId: string;
  cohortId: string;
  campaignId: string;
  campaignName: string;
  adapterKey: string;
  channel: Channel;
  purpose: 'inclusion' | 'suppression';
  executionMode: 'sandbox' | 'live';
  estimatedSize: number;
}

export type AudienceSyncOutcome = { kind: 'synced'; providerReference: string } | { kind: 'rejected'; reasons: string[] };

export interface AudienceSupplierContext {
  db: Knex;
  sandboxSlowMs: number;
}

/**
 * A supplier's audience endpoint. Throwing `UnknownOutcome` (shared/adapters/adapter.ts)
 * means the supplier may have acted: the attempt then needs a person's resolution.
 */
export interface AudienceSupplier {
  adapterKey: string;
  /** False when the supplier is refused before anything is sent (no live connection): no attempt goes in flight. */
  readonly callsSupplier: boolean;
  sync(request: AudienceSyncRequest, ctx: AudienceSupplierContext): Promise<AudienceSyncOutcome>;
}

export type AudienceSupplierFor = (definition: { adapterKey: string; executionMode: 'sandbox' | 'live' }) => AudienceSupplier;
