import { sellersAt } from '../support/adcp-env';
import { createTestEnv, json, type TestApi, type TestEnv } from '../support/api';
import type { BookingBody } from '../support/bookings';
import { until } from '../support/wait';
import { SELLER_ACCOUNT, launchOnSeller } from '../support/adcp-buy';
import { productRef, startTestSeller, type TestSeller } from '../support/adcp-test-seller';
import { walletAndLedger } from '../support/wallet';
import type { RunningWorkers } from '../../workers/main';

/**
 * Sellers as they are: one that will not list its catalogue wholesale (the currency check asks
 * it to refine the one product instead), one that will list prices in no way at all (the line is
 * refused with why, nothing sent), one that takes bookings only for accounts declared with
 * sync_accounts and named by its own account id, and one that holds a declared account pending.
 */
let noWholesale: TestSeller;
let noPrices: TestSeller;
let declared: TestSeller;
let env: TestEnv;
let api: TestApi;
let workers: RunningWorkers;

beforeAll(async () => {
  [noWholesale, noPrices, declared] = await Promise.all([startTestSeller(), startTestSeller(), startTestSeller()]);
  noWholesale.refusedBuyingModes = new Set(['wholesale']);
  noPrices.refusedBuyingModes = new Set(['wholesale', 'refine']);
  declared.syncedAccountsOnly = true;
  env = await createTestEnv();
  const sellers = sellersAt({ ctl: noWholesale.agentUrl, spot: noPrices.agentUrl, acme: declared.agentUrl });
  api = await env.api({ ADCP_SELLERS: sellers });
  workers = await env.workers({ ADCP_SELLERS: sellers, WORKER_QUEUES: 'supplier.adcp-ctl,supplier.adcp-spot,supplier.adcp-acme' });
}, 60_000);
afterAll(async () => {
  await workers?.close();
  await env?.close();
  await Promise.all([noWholesale, noPrices, declared].map((s) => s?.stop()));
});

async function settled(token: string, bookingId: string) {
  let line: BookingBody['lines'][number] | undefined;
  await until('the line settles', async () => {
    const res = await api.fetch(`/api/v1/bookings/${bookingId}`, { token });
    line = res.status === 200 ? (await json<{ booking: BookingBody }>(res)).booking.lines[0] : undefined;
    return !!line && !['queued', 'in-progress'].includes(line.status);
  });
  return line!;
}

test('a seller that refuses wholesale listing is asked to refine the one product, and the line is booked', async () => {
  const { token, booking } = await launchOnSeller(env, api, 'org-a1', 'adcp-ctl', productRef('ctv_sync'));
  expect((await settled(token, booking.id)).status).toBe('confirmed');
  expect(noWholesale.productAsks).toEqual(['wholesale', 'refine']);
  expect(noWholesale.creates).toHaveLength(1);
}, 60_000);

test('a seller that will list the price in no way: the line is refused with why, nothing sent, and its money released', async () => {
  const { token, booking } = await launchOnSeller(env, api, 'org-a2', 'adcp-spot', productRef('ctv_sync'));
  const line = await settled(token, booking.id);
  expect(line.status).toBe('rejected');
  expect(line.evidence).toMatch(
    /would not list the product's prices \(wholesale: UNSUPPORTED_FEATURE; refine: UNSUPPORTED_FEATURE\).*nothing was sent/,
  );
  expect(noPrices.creates).toHaveLength(0);
  expect((await walletAndLedger(env, 'org-a2')).consistent).toBe(true);
}, 60_000);

test("a seller that takes only declared accounts: the account is declared once, the seller's id kept, and every request after names it", async () => {
  const { token, booking } = await launchOnSeller(env, api, 'org-a3', 'adcp-acme', productRef('ctv_sync'));
  expect((await settled(token, booking.id)).status).toBe('confirmed');
  const id = `acct_${SELLER_ACCOUNT.brand.domain}_${SELLER_ACCOUNT.operator}`;
  expect(declared.creates.at(-1)!.account).toEqual({ account_id: id });
  const access = await env.db('supplier_credentials').where({ adapter_key: 'adcp-acme', advertiser_id: 'org-a3' }).first();
  expect(access.account).toMatchObject({ ...SELLER_ACCOUNT, account_id: id });
  // A second booking for the workspace names the kept id without declaring it again.
  const syncs = declared.syncedAccounts.size;
  const again = await launchOnSeller(env, api, 'org-a3', 'adcp-acme', productRef('ctv_sync'));
  expect((await settled(again.token, again.booking.id)).status).toBe('confirmed');
  expect(declared.creates.at(-1)!.account).toEqual({ account_id: id });
  expect(declared.syncedAccounts.size).toBe(syncs);
}, 60_000);

test("a declared account the seller holds pending: the line is refused with the seller's word, nothing sent", async () => {
  declared.accountStatus = 'pending_approval';
  try {
    const { token, booking } = await launchOnSeller(env, api, 'org-a4', 'adcp-acme', productRef('ctv_sync'), {
      account: { brand: { domain: 'newcomer.example' }, operator: 'newcomer.example' },
    });
    const line = await settled(token, booking.id);
    expect(line.status).toBe('rejected');
    expect(line.evidence).toMatch(
      /holds the workspace's account as pending_approval \(The seller reviews new advertisers within two days\.\)/,
    );
    expect(declared.creates.filter((c) => (c.packages?.[0] as { buyer_ref?: string }).buyer_ref === line.id)).toHaveLength(0);
  } finally {
    declared.accountStatus = 'active';
  }
}, 60_000);
