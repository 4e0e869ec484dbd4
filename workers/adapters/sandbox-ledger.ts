import type { Knex } from 'knex';

export interface Receipt {
  adapterKey: string;
  operation: string;
  /** The attempt id the caller sent as its idempotency key. */
  idempotencyKey: string;
  lineId?: string | null;
  /** What the supplier received (never file bytes: their size and hash at most). */
  request: unknown;
  outcome: string;
  providerReference: string | null;
}

/** Every operation a sandbox supplier receives, so tests can prove "executed exactly once". */
export async function recordReceipt(db: Knex, r: Receipt): Promise<void> {
  await db('sandbox_ledger').insert({
    adapter_key: r.adapterKey,
    operation: r.operation,
    idempotency_key: r.idempotencyKey,
    line_id: r.lineId ?? null,
    request: JSON.stringify(r.request),
    outcome: r.outcome,
    provider_reference: r.providerReference,
  });
}
