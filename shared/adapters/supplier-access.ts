import type { Knex } from 'knex';
import { z } from 'zod';
import { ADAPTERS, type AdapterDescriptor } from './catalogue';
import { SellerAccountSchema, type SellerAccountRecord } from './credentials';
import { adcpSellersAtStart, type AdcpSeller } from '../config/adcp-sellers';

/**
 * Ops grant a workspace access to a supplier that needs it (a live adapter, an AdCP seller):
 * `npm run admin -- suppliers grant|revoke|list`. Access is a `supplier_credentials` row, active
 * and approved, naming where the credential is kept (never the secret) and, for an AdCP seller,
 * the workspace's account there. A workspace has at most one active row per supplier.
 */

/** Input that names nothing real or is not in shape: the command says why and changes nothing. */
export class SupplierAccessRefused extends Error {}

/** Where the credential is kept: `scheme:reference` (e.g. `env:ADCP_TOKEN_EXAMPLE`), never the secret itself. */
const SecretRefSchema = z
  .string()
  .max(300)
  .regex(/^[A-Za-z][A-Za-z0-9_.+-]*:\S+$/, 'a reference such as env:NAME, never the secret itself');

export interface SupplierGrant {
  advertiserId: string;
  adapterKey: string;
  account: SellerAccountRecord | null;
  secretRef: string;
}

const ACCOUNT_EXAMPLE = '{"brand":{"domain":"acme.example"},"operator":"agency.example"}';

const issues = (e: z.ZodError) => e.issues.map((i) => `${i.path.join('.') || 'value'}: ${i.message}`).join('; ');

/** The supplier named, if this deployment has it and it needs access to be granted. */
function accessAdapter(adapterKey: string, adapters: readonly AdapterDescriptor[] = ADAPTERS): AdapterDescriptor {
  const adapter = adapters.find((a) => a.key === adapterKey);
  const needing = adapters.filter((a) => a.requiresCredential).map((a) => a.key);
  if (!adapter)
    throw new SupplierAccessRefused(`unknown adapter key ${adapterKey}; those that take supplier access here: ${needing.join(', ')}`);
  if (!adapter.requiresCredential) {
    throw new SupplierAccessRefused(`${adapterKey} needs no supplier access: every workspace may use it (${adapter.kind})`);
  }
  return adapter;
}

/** The workspace and supplier a command names: both given, the supplier one that takes access here. */
export function parseSupplierRef(
  input: { org?: string; adapter?: string },
  adapters: readonly AdapterDescriptor[] = ADAPTERS,
): { advertiserId: string; adapter: AdapterDescriptor } {
  if (!input.org) throw new SupplierAccessRefused('--org (the workspace) is required');
  if (!input.adapter) throw new SupplierAccessRefused('--adapter (the adapter key) is required');
  return { advertiserId: input.org, adapter: accessAdapter(input.adapter, adapters) };
}

/**
 * A grant as ops type it, checked: the supplier exists here and takes access; an AdCP seller's
 * account is the AdCP account reference (JSON), required for a seller and refused for others; the
 * secret reference defaults, for a seller, to the credential its configuration names.
 */
export function parseSupplierGrant(
  input: { org?: string; adapter?: string; account?: string; secretRef?: string },
  adapters: readonly AdapterDescriptor[] = ADAPTERS,
  sellers: readonly AdcpSeller[] = adcpSellersAtStart(),
): SupplierGrant {
  const { advertiserId, adapter } = parseSupplierRef(input, adapters);
  let account: SellerAccountRecord | null = null;
  if (adapter.kind === 'adcp') {
    if (input.account === undefined) {
      throw new SupplierAccessRefused(`--account is required for an AdCP seller: the workspace's account there, e.g. '${ACCOUNT_EXAMPLE}'`);
    }
    let json: unknown;
    try {
      json = JSON.parse(input.account);
    } catch {
      throw new SupplierAccessRefused(`--account is not JSON; write the AdCP account reference, e.g. '${ACCOUNT_EXAMPLE}'`);
    }
    const parsed = SellerAccountSchema.safeParse(json);
    if (!parsed.success)
      throw new SupplierAccessRefused(`--account is not an AdCP account reference (${issues(parsed.error)}), e.g. '${ACCOUNT_EXAMPLE}'`);
    account = parsed.data;
  } else if (input.account !== undefined) {
    throw new SupplierAccessRefused(`--account is for AdCP sellers; ${adapter.key} takes none`);
  }
  const credentialEnv = sellers.find((s) => s.key === adapter.adcpSeller)?.credentialEnv;
  const secretRef = input.secretRef ?? (adapter.kind === 'adcp' ? `env:${credentialEnv ?? 'none'}` : undefined);
  if (secretRef === undefined)
    throw new SupplierAccessRefused(`--secret-ref is required for ${adapter.key}: where its credential is kept, e.g. env:NAME`);
  const ref = SecretRefSchema.safeParse(secretRef);
  if (!ref.success) throw new SupplierAccessRefused(`--secret-ref: ${issues(ref.error)}`);
  return { advertiserId, adapterKey: adapter.key, account, secretRef: ref.data };
}

const sameAccount = (a: unknown, b: SellerAccountRecord | null) => JSON.stringify(a ?? null) === JSON.stringify(b);

/**
 * Records the grant: a new active, approved row, or the workspace's active row brought to it
 * (approved, its account and reference as given; any second active row revoked). Concurrent
 * grants for one workspace queue on its row, so they never leave two active rows.
 */
export async function grantSupplierAccess(db: Knex, grant: SupplierGrant): Promise<'granted' | 'updated' | 'unchanged'> {
  return db.transaction(async (trx) => {
    await lockWorkspace(trx, grant.advertiserId);
    const active = await trx('supplier_credentials')
      .where({ adapter_key: grant.adapterKey, advertiser_id: grant.advertiserId, status: 'active' })
      .orderBy('id', 'desc')
      .forUpdate()
      .select('id', 'approved_at', 'account', 'secret_ref');
    const [kept, ...others] = active;
    if (!kept) {
      await trx('supplier_credentials').insert({
        adapter_key: grant.adapterKey,
        advertiser_id: grant.advertiserId,
        secret_ref: grant.secretRef,
        account: grant.account ? JSON.stringify(grant.account) : null,
        approved_at: trx.fn.now(),
      });
      return 'granted';
    }
    if (!others.length && kept.approved_at && kept.secret_ref === grant.secretRef && sameAccount(kept.account, grant.account)) {
      return 'unchanged';
    }
    await trx('supplier_credentials')
      .where({ id: kept.id })
      .update({
        secret_ref: grant.secretRef,
        account: grant.account ? JSON.stringify(grant.account) : null,
        approved_at: trx.raw('coalesce(approved_at, now())'),
      });
    if (others.length) {
      await trx('supplier_credentials')
        .whereIn(
          'id',
          others.map((o) => o.id),
        )
        .update({ status: 'revoked' });
    }
    return 'updated';
  });
}

/** Ends the workspace's access to the supplier: its active rows are revoked (kept, for the record). */
export async function revokeSupplierAccess(db: Knex, advertiserId: string, adapterKey: string): Promise<'revoked' | 'no-access'> {
  return db.transaction(async (trx) => {
    await lockWorkspace(trx, advertiserId);
    const n = await trx('supplier_credentials')
      .where({ adapter_key: adapterKey, advertiser_id: advertiserId, status: 'active' })
      .update({ status: 'revoked' });
    return n > 0 ? 'revoked' : 'no-access';
  });
}

export interface SupplierAccessRow {
  advertiserId: string | null;
  adapterKey: string;
  status: string;
  approvedAt: string | null;
  account: unknown;
  secretRef: string;
}

/** Every access row (a workspace's, or all), newest first within each workspace and supplier. */
export async function listSupplierAccess(db: Knex, advertiserId?: string): Promise<SupplierAccessRow[]> {
  const rows: Array<Record<string, unknown>> = await db('supplier_credentials')
    .modify((q) => (advertiserId ? q.where({ advertiser_id: advertiserId }) : q))
    .orderBy([{ column: 'advertiser_id' }, { column: 'adapter_key' }, { column: 'id', order: 'desc' }])
    .select('advertiser_id', 'adapter_key', 'status', 'approved_at', 'account', 'secret_ref');
  return rows.map((r) => ({
    advertiserId: r.advertiser_id as string | null,
    adapterKey: r.adapter_key as string,
    status: r.status as string,
    approvedAt: r.approved_at ? (r.approved_at as Date).toISOString() : null,
    account: r.account ?? null,
    secretRef: r.secret_ref as string,
  }));
}

async function lockWorkspace(trx: Knex.Transaction, advertiserId: string): Promise<void> {
  const ws = await trx('workspaces').where({ id: advertiserId }).forUpdate().first('id');
  if (!ws) {
    throw new SupplierAccessRefused(`unknown workspace ${advertiserId}: a workspace is made by its first signed-in request`);
  }
}
