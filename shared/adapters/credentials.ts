import type { Knex } from 'knex';
import { unprocessable } from '../errors';

/**
 * Live work with a supplier needs an active, approved credential: the workspace's own or a
 * deployment-wide one. Without it the request is refused (422) before anything is queued.
 */
export async function requireSupplierAccess(db: Knex, adapterKey: string, advertiserId: string, what: string): Promise<void> {
  const credential = await db('supplier_credentials')
    .where({ adapter_key: adapterKey, status: 'active' })
    .whereNotNull('approved_at')
    .where((q) => q.where({ advertiser_id: advertiserId }).orWhereNull('advertiser_id'))
    .first('adapter_key');
  if (!credential) {
    throw unprocessable(
      `${what} through ${adapterKey} needs approved supplier access, which this workspace does not have.`,
      'supplier_access_required',
    );
  }
}
