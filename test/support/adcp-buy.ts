import type { Knex } from 'knex';
import { json, type TestApi, type TestEnv } from './api';
import { approve, draftCampaign, post, type BookingBody } from './bookings';
import { approvedCreative } from './creatives';
import { fundWallet } from './wallet';
import { grantSupplierAccess } from '../../shared/adapters/supplier-access';
import type { SellerAccountRecord } from '../../shared/adapters/credentials';

/** The workspace's account on the example sellers (AdCP `account`: brand domain and operator). */
export const SELLER_ACCOUNT = { brand: { domain: 'acmeoutdoor.example' }, operator: 'acmeoutdoor.example' };

/** Ops grant a workspace access to a seller, naming its account there (as `npm run admin -- suppliers grant` does). */
export async function grantSellerAccess(
  db: Knex,
  org: string,
  adapterKey: string,
  account: SellerAccountRecord = SELLER_ACCOUNT,
): Promise<void> {
  await grantSupplierAccess(db, { advertiserId: org, adapterKey, account, secretRef: 'env:FLIGHTDECK_TEST_ADCP_TOKEN' });
}

/**
 * A funded workspace with access to the seller launches one live line on a product of it, with a
 * creative the seller approved; resolves with the booking the launch (202) returned.
 */
export async function launchOnSeller(
  env: TestEnv,
  api: TestApi,
  org: string,
  adapterKey: string,
  supplierProduct: { productId: string; pricingOptionId: string },
  /** The campaign's mode and flight (default: live, the helper's far-future flight). */
  {
    account,
    ...campaign
  }: {
    executionMode?: 'sandbox' | 'live';
    startDate?: string;
    endDate?: string;
    maximumCommitmentMinor?: number;
    account?: SellerAccountRecord;
  } = {},
): Promise<{ token: string; campaignId: string; booking: BookingBody }> {
  const token = await env.issuer.token({ org, user: `${org}-buyer` });
  if ((await api.fetch('/api/v1/auth/context', { token })).status !== 200) throw new Error(`${org} could not sign in`);
  await grantSellerAccess(env.db, org, adapterKey, account);
  await fundWallet(env, org, 1_000_000);
  const line = {
    channel: 'ctv',
    adapterKey,
    budgetMinor: 100_000,
    supplierProduct,
    creativeIds: [await approvedCreative(api, env.db, token, adapterKey)],
  };
  const { campaignId, planVersion } = await draftCampaign(api, token, [line] as never, {
    executionMode: 'live',
    maximumCommitmentMinor: 100_000,
    ...campaign,
  });
  await approve(api, token, campaignId, planVersion);
  const res = await post(api, token, `/api/v1/campaigns/${campaignId}/launch`);
  if (res.status !== 202) throw new Error(`launch failed: ${res.status} ${await res.text()}`);
  const { booking } = await json<{ booking: BookingBody }>(res);
  return { token, campaignId, booking };
}
