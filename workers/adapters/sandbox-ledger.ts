import type { Knex } from 'knex';
import { Batcher, perPool, unlessDatabaseDown } from '../../shared/db/batcher';
import { rawPrepared } from '../../shared/db/knex';

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

const rowOf = (r: Receipt) => ({
  adapter_key: r.adapterKey,
  operation: r.operation,
  idempotency_key: r.idempotencyKey,
  line_id: r.lineId ?? null,
  request: JSON.stringify(r.request),
  outcome: r.outcome,
  provider_reference: r.providerReference,
});

// One statement text whatever the batch's size, so it is prepared once per connection.
const INSERT_RECEIPTS = `
  insert into sandbox_ledger (adapter_key, operation, idempotency_key, line_id, request, outcome, provider_reference)
  select adapter_key, operation, idempotency_key, line_id, request::jsonb, outcome, provider_reference
    from jsonb_to_recordset(?::jsonb) as r(adapter_key text, operation text, idempotency_key text, line_id uuid,
      request text, outcome text, provider_reference text)`;

// The receipts of concurrent calls go into the ledger together, a batch per insert.
const receipts = perPool(
  (db) =>
    new Batcher(
      async (rs: readonly Receipt[]) => {
        // Each row as a single receipt is written: `request` as its JSON text.
        await rawPrepared(db, INSERT_RECEIPTS, [JSON.stringify(rs.map(rowOf))]);
        return rs.map(() => undefined);
      },
      { concurrency: 2, maxSize: 100, retryAlone: unlessDatabaseDown },
    ),
);

/** Every operation a sandbox supplier receives, so tests can prove "executed exactly once"; written before it answers. */
export async function recordReceipt(db: Knex, r: Receipt): Promise<void> {
  if ((db as Knex.Transaction).isTransaction) await db('sandbox_ledger').insert(rowOf(r));
  else await receipts(db).submit(r);
}
