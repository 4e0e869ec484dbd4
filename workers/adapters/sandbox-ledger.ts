import type { Knex } from 'knex';
import { Batcher, perPool, unlessDatabaseDown } from '../../shared/db/batcher';
import { rawPrepared } from '../../shared/db/knex';
import { clockedNow } from '../../shared/workspaces/sandbox-clock';

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
  /** When the operation takes effect at the supplier, on its clock (line operations and bookings). */
  effectiveAt?: Date | null;
}

const rowOf = (r: Receipt) => ({
  adapter_key: r.adapterKey,
  operation: r.operation,
  idempotency_key: r.idempotencyKey,
  line_id: r.lineId ?? null,
  request: JSON.stringify(r.request),
  outcome: r.outcome,
  provider_reference: r.providerReference,
  effective_at: r.effectiveAt ? r.effectiveAt.toISOString() : null,
});

// One statement text whatever the batch's size, so it is prepared once per connection.
const INSERT_RECEIPTS = `
  insert into sandbox_ledger (adapter_key, operation, idempotency_key, line_id, request, outcome, provider_reference, effective_at)
  select adapter_key, operation, idempotency_key, line_id, request::jsonb, outcome, provider_reference, effective_at::timestamptz
    from jsonb_to_recordset(?::jsonb) as r(adapter_key text, operation text, idempotency_key text, line_id uuid,
      request text, outcome text, provider_reference text, effective_at text)`;

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

/** The supplier's "now" for a line: its workspace's sandbox test clock for a sandbox line, real time for a live one. */
export async function supplierNow(db: Knex, lineId: string, mode: 'sandbox' | 'live', real = new Date()): Promise<Date> {
  if (mode === 'live') return real;
  const row = await db('booking_lines as l')
    .leftJoin('sandbox_clocks as c', 'c.advertiser_id', 'l.advertiser_id')
    .where('l.id', lineId)
    .first('c.offset_days');
  return clockedNow(mode, Number(row?.offset_days ?? 0), real);
}

/** What a sandbox supplier did to a line, in the order it received it: the operations it carried out, with when they took effect. */
export interface SupplierOperation {
  operation: string;
  effectiveAt: Date;
  request: Record<string, unknown>;
}

export async function supplierOperations(db: Knex, lineId: string): Promise<SupplierOperation[]> {
  const rows = (await db('sandbox_ledger')
    .where({ line_id: lineId })
    .whereNot({ outcome: 'rejected' })
    .orderBy('id')
    .select('operation', 'effective_at', 'received_at', 'request')) as Array<{
    operation: string;
    effective_at: Date | null;
    received_at: Date;
    request: Record<string, unknown>;
  }>;
  return rows.map((r) => ({ operation: r.operation, effectiveAt: r.effective_at ?? r.received_at, request: r.request }));
}
