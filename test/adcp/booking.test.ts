import { sellersAt } from '../support/adcp-env';
import http from 'node:http';
import { randomUUID } from 'node:crypto';
import { createTestEnv, json, type TestApi, type TestEnv } from '../support/api';
import { approve, draftCampaign, post, type BookingBody } from '../support/bookings';
import { approvedCreative } from '../support/creatives';
import { fundWallet, walletAndLedger } from '../support/wallet';
import { grantSellerAccess } from '../support/adcp-buy';
import { startExampleSeller, type RunningSeller } from '../support/adcp-sellers';
import { productRef, startTestSeller, type TestSeller } from '../support/adcp-test-seller';
import { AdcpSellerConnection } from '../../shared/adapters/adcp/connection';
import { adcpBook } from '../../workers/adapters/adcp/book';
import type { RunningWorkers } from '../../workers/main';
import { freePort } from '../support/ports';
import { until } from '../support/wait';

let seller: TestSeller;
let example: RunningSeller;
let env: TestEnv;
let api: TestApi;
let workers: RunningWorkers;
let deadUrl: string;

const ACCOUNT = { brand: { domain: 'acmeoutdoor.example' }, operator: 'acmeoutdoor.example' };
/** Our test seller's products: one it finishes later (submitted), one it books at once. */
const GUARANTEED = productRef('ctv_async');
const NON_GUARANTEED = productRef('ctv_sync');
/** The SDK's example seller prices every product in dollars. */
const EXAMPLE_USD = { productId: 'acme_dooh_remnant_q2', pricingOptionId: 'cpm_floor' };

beforeAll(async () => {
  [seller, example] = await Promise.all([startTestSeller(), startExampleSeller('non_guaranteed')]);
  deadUrl = `http://127.0.0.1:${await freePort()}/mcp`;
  env = await createTestEnv();
  const sellers = sellersAt({ acme: seller.agentUrl, 'acme-sandbox': seller.agentUrl, spot: example.agentUrl, ctl: deadUrl });
  api = await env.api({ ADCP_SELLERS: sellers });
  workers = await env.workers({
    ADCP_SELLERS: sellers,
    ADCP_TASK_POLL_INTERVAL_MS: '200',
    SUPPLIER_TIMEOUT_MS: '20000',
    WORKER_QUEUES: 'supplier.adcp-acme,supplier.adcp-acme-sandbox,supplier.adcp-spot,supplier.adcp-ctl',
  });
}, 60_000);
afterAll(async () => {
  await workers?.close();
  await env?.close();
  await Promise.all([seller?.stop(), example?.stop()]);
});

/** Polls the booking until `done`; a busy machine's 503 (the rate limiter's Redis) is asked again. */
async function waitForBooking(_api: TestApi, token: string, id: string, done: (b: BookingBody) => boolean, timeoutMs: number) {
  const deadline = Date.now() + timeoutMs;
  let last: BookingBody | undefined;
  while (Date.now() < deadline) {
    const res = await api.fetch(`/api/v1/bookings/${id}`, { token });
    if (res.status === 200) {
      last = (await json<{ booking: BookingBody }>(res)).booking;
      if (done(last)) return last;
    } else expect(res.status).toBe(503);
    await new Promise((r) => setTimeout(r, 150));
  }
  throw new Error(`booking ${id} did not settle: ${JSON.stringify(last?.lines.map((l) => l.status))}`);
}

/** Ops grant a workspace access to a seller, naming its account there. */
const grantAccess = (org: string, adapterKey: string) => grantSellerAccess(env.db, org, adapterKey, ACCOUNT);

async function workspace(org: string) {
  const token = await env.issuer.token({ org, user: `${org}-buyer` });
  expect((await api.fetch('/api/v1/auth/context', { token })).status).toBe(200);
  return token;
}

async function launch(token: string, lines: Array<Record<string, unknown>>, executionMode: 'live' | 'sandbox') {
  const budget = lines.reduce((s, l) => s + (l.budgetMinor as number), 0);
  const { campaignId, planVersion } = await draftCampaign(api, token, lines as never, { executionMode, maximumCommitmentMinor: budget });
  await approve(api, token, campaignId, planVersion);
  return post(api, token, `/api/v1/campaigns/${campaignId}/launch`);
}

async function liveLine(org: string, token: string, adapterKey: string, supplierProduct: unknown, budgetMinor = 100_000) {
  await fundWallet(env, org, 1_000_000);
  return {
    channel: 'ctv',
    adapterKey,
    budgetMinor,
    supplierProduct,
    creativeIds: [await approvedCreative(api, env.db, token, adapterKey)],
  };
}

describe('booking with AdCP sellers', () => {
  test('a seller that answers submitted: the line waits in progress on its task, and polling tasks/get confirms it with the media buy and package', async () => {
    const token = await workspace('org-g1');
    await grantAccess('org-g1', 'adcp-acme');
    const res = await launch(token, [await liveLine('org-g1', token, 'adcp-acme', GUARANTEED)], 'live');
    expect(res.status).toBe(202);
    const { booking } = await json<{ booking: BookingBody }>(res);
    let held: { task_id: string } | undefined;
    await until('the seller answers submitted', async () => {
      held = await env.db('supplier_tasks').where({ line_id: booking.lines[0]!.id }).first();
      return !!held;
    });
    expect(held).toMatchObject({ status: 'pending', adapter_key: 'adcp-acme' });
    seller.finish();
    const done = await waitForBooking(api, token, booking.id, (b) => b.lines[0]!.status === 'confirmed', 30_000);
    const line = done.lines[0]!;
    expect(line.providerReference).toMatch(/^mb_\w+\/pkg_\w+$/);
    const actions = done.events.filter((e) => e.lineId === line.id).map((e) => e.action);
    expect(actions).toEqual(expect.arrayContaining(['line.attempt-started', 'line.supplier-pending', 'line.confirmed']));
    expect(actions.indexOf('line.supplier-pending')).toBeLessThan(actions.indexOf('line.confirmed'));
    // The attempt id was the idempotency key; the attempt closes confirmed once the task completes.
    const attempt = await env.db('supplier_attempts').where({ id: line.providerAttemptId }).first();
    expect(attempt).toMatchObject({ status: 'confirmed', provider_reference: line.providerReference });
    const task = await env.db('supplier_tasks').where({ attempt_id: line.providerAttemptId }).first();
    expect(task).toMatchObject({ status: 'done', adapter_key: 'adcp-acme' });
    expect(task.task_id).toBe(held!.task_id);
    expect((await walletAndLedger(env, 'org-g1')).consistent).toBe(true);
  }, 60_000);

  test('a seller that answers at once: the line is confirmed with no task to wait on', async () => {
    const token = await workspace('org-n1');
    await grantAccess('org-n1', 'adcp-acme');
    const res = await launch(token, [await liveLine('org-n1', token, 'adcp-acme', NON_GUARANTEED)], 'live');
    expect(res.status).toBe(202);
    const { booking } = await json<{ booking: BookingBody }>(res);
    const done = await waitForBooking(api, token, booking.id, (b) => b.lines[0]!.status === 'confirmed', 30_000);
    expect(done.lines[0]!.providerReference).toMatch(/^mb_\w+\/pkg_\w+$/);
    expect(await env.db('supplier_tasks').where({ line_id: done.lines[0]!.id })).toHaveLength(0);
    // The package's budget went in pounds, major units, the line id as its buyer_ref.
    const sent = seller.creates.find((c) => (c.packages?.[0] as { buyer_ref?: string }).buyer_ref === done.lines[0]!.id);
    expect(sent?.packages?.[0]).toMatchObject({ product_id: 'ctv_sync', pricing_option_id: 'cpm_fixed', budget: 1000 });
  }, 60_000);

  test('a sandbox booking reaches a sandbox seller through a sandbox account only', async () => {
    const token = await workspace('org-s1');
    await grantAccess('org-s1', 'adcp-acme-sandbox');
    const line = { channel: 'ctv', adapterKey: 'adcp-acme-sandbox', budgetMinor: 20_000, supplierProduct: NON_GUARANTEED };
    const res = await launch(token, [line], 'sandbox');
    expect(res.status).toBe(202);
    const { booking } = await json<{ booking: BookingBody }>(res);
    const done = await waitForBooking(api, token, booking.id, (b) => ['confirmed', 'rejected'].includes(b.lines[0]!.status), 30_000);
    expect(done.lines[0]!.status).toBe('confirmed');
    const sent = seller.creates.find((c) => (c.packages?.[0] as { buyer_ref?: string }).buyer_ref === done.lines[0]!.id);
    expect(sent?.account).toMatchObject({ ...ACCOUNT, sandbox: true });
  }, 60_000);

  test('a sandbox campaign cannot plan, launch or book on a live seller', async () => {
    const token = await workspace('org-s2');
    await grantAccess('org-s2', 'adcp-acme');
    const line = { channel: 'ctv', adapterKey: 'adcp-acme', budgetMinor: 20_000, supplierProduct: GUARANTEED };
    const { campaignId } = await draftCampaign(api, token, [{ channel: 'ctv', adapterKey: 'sandbox-ctv', budgetMinor: 20_000 }]);
    const planned = await post(api, token, `/api/v1/campaigns/${campaignId}/plan`, { lines: [line], expectedVersion: 1 }, 'PUT');
    expect(planned.status).toBe(422);
    expect((await json<{ code: string }>(planned)).code).toBe('adapter_mode_unsupported');

    // And were a sandbox line ever handed to the live seller's adapter, it sends nothing.
    const received: string[] = [];
    const spy = http.createServer((req, res) => {
      received.push(`${req.method} ${req.url}`);
      res.statusCode = 500;
      res.end();
    });
    await new Promise<void>((r) => spy.listen(0, '127.0.0.1', r));
    const port = (spy.address() as { port: number }).port;
    const connection = new AdcpSellerConnection(
      { key: 'acme', agentUrl: `http://127.0.0.1:${port}/mcp`, channels: ['ctv'], sandbox: false },
      { capabilitiesTtlMs: 0 },
    );
    const outcome = await adcpBook(connection)(
      {
        attemptId: `att_${randomUUID()}`,
        bookingId: randomUUID(),
        lineId: randomUUID(),
        channel: 'ctv',
        budgetMinor: 20_000,
        executionMode: 'sandbox',
        channelCampaignId: 'cc-1',
        startDate: '2099-03-01',
        endDate: '2099-03-31',
        supplierProduct: GUARANTEED,
      },
      { db: env.db, sandboxSlowMs: 0 },
    );
    spy.close();
    expect(outcome).toEqual({ kind: 'rejected', reason: expect.stringContaining('takes live bookings only') });
    expect(received).toEqual([]);
  }, 30_000);

  test('without approved access naming an account on the seller, launch is refused and nothing is queued', async () => {
    const token = await workspace('org-x1');
    // Access without an account (as other suppliers have it) does not do for an AdCP seller.
    await env
      .db('supplier_credentials')
      .insert({ adapter_key: 'adcp-spot', advertiser_id: 'org-x1', secret_ref: 'x', approved_at: new Date() });
    const res = await launch(token, [await liveLine('org-x1', token, 'adcp-spot', NON_GUARANTEED)], 'live');
    expect(res.status).toBe(422);
    expect((await json<{ code: string }>(res)).code).toBe('supplier_access_required');
    expect(await env.db('bookings').where({ advertiser_id: 'org-x1' })).toHaveLength(0);
  }, 30_000);

  test('a plan line on an AdCP seller must name its product; other suppliers refuse one', async () => {
    const token = await workspace('org-p1');
    const { campaignId } = await draftCampaign(api, token, [{ channel: 'ctv', adapterKey: 'manual', budgetMinor: 1_000 }], {
      executionMode: 'live',
    });
    const without = await post(
      api,
      token,
      `/api/v1/campaigns/${campaignId}/plan`,
      { lines: [{ channel: 'ctv', adapterKey: 'adcp-spot', budgetMinor: 1_000 }], expectedVersion: 1 },
      'PUT',
    );
    expect(without.status).toBe(400);
    expect((await json<{ code: string }>(without)).code).toBe('supplier_product_required');
    const onOther = await post(
      api,
      token,
      `/api/v1/campaigns/${campaignId}/plan`,
      { lines: [{ channel: 'ctv', adapterKey: 'manual', budgetMinor: 1_000, supplierProduct: NON_GUARANTEED }], expectedVersion: 1 },
      'PUT',
    );
    expect(onOther.status).toBe(400);
    expect((await json<{ code: string }>(onOther)).code).toBe('supplier_product_unexpected');
    // Bad input changes nothing: the plan is still the first version.
    expect((await env.db('plans').where({ campaign_id: campaignId }).first()).version).toBe(1);
  }, 30_000);

  test('a seller down at launch: nothing reached it, and the line waits for a person in reconciliation', async () => {
    const token = await workspace('org-d1');
    await grantAccess('org-d1', 'adcp-ctl');
    const res = await launch(token, [await liveLine('org-d1', token, 'adcp-ctl', NON_GUARANTEED)], 'live');
    expect(res.status).toBe(202);
    const { booking } = await json<{ booking: BookingBody }>(res);
    const done = await waitForBooking(api, token, booking.id, (b) => b.lines[0]!.status === 'reconciliation-required', 30_000);
    const attempt = await env.db('supplier_attempts').where({ id: done.lines[0]!.providerAttemptId }).first();
    expect(attempt.status).toBe('unknown');
    expect(JSON.stringify(attempt.detail)).toContain('could not be reached');
  }, 60_000);

  describe('a price not in pounds', () => {
    /** Launches one live line on the product; resolves with the settled line and the workspace's wallet. */
    async function launchPriced(org: string, adapterKey: string, product: unknown) {
      const token = await workspace(org);
      await grantAccess(org, adapterKey);
      const res = await launch(token, [await liveLine(org, token, adapterKey, product)], 'live');
      expect(res.status).toBe(202);
      const { booking } = await json<{ booking: BookingBody }>(res);
      const done = await waitForBooking(api, token, booking.id, (b) => !['queued', 'in-progress'].includes(b.lines[0]!.status), 30_000);
      return { line: done.lines[0]!, money: await walletAndLedger(env, org) };
    }

    test('is refused before anything is sent: the line is rejected with the currency, the seller got no create, the reservation is released', async () => {
      const { line, money } = await launchPriced('org-c1', 'adcp-acme', productRef('ctv_usd'));
      expect(line.status).toBe('rejected');
      const attempt = await env.db('supplier_attempts').where({ id: line.providerAttemptId }).first();
      expect(JSON.stringify(attempt.detail)).toContain('priced in USD');
      expect(JSON.stringify(attempt.detail)).toContain('nothing was sent');
      expect(seller.creates.filter((c) => (c.packages?.[0] as { buyer_ref?: string }).buyer_ref === line.id)).toEqual([]);
      // Nothing moved: the wallet holds what was funded, nothing reserved or spent.
      expect(money.consistent).toBe(true);
      expect(money.wallet).toMatchObject({ balanceMinor: 1_000_000, reservedMinor: 0 });
    }, 60_000);

    test("the SDK's example seller prices in dollars: its upstream ad platform receives no order", async () => {
      const before = await (await fetch(`${example.upstream.url}/_debug/traffic`)).json();
      const { line, money } = await launchPriced('org-c2', 'adcp-spot', EXAMPLE_USD);
      expect(line.status).toBe('rejected');
      const attempt = await env.db('supplier_attempts').where({ id: line.providerAttemptId }).first();
      expect(JSON.stringify(attempt.detail)).toContain('priced in USD');
      const after = (await (await fetch(`${example.upstream.url}/_debug/traffic`)).json()) as { traffic: Record<string, number> };
      const orders = (t: { traffic: Record<string, number> }) => Object.entries(t.traffic).filter(([k]) => k.startsWith('POST /v1/orders'));
      expect(orders(after)).toEqual(orders(before as never));
      expect(money.wallet).toMatchObject({ balanceMinor: 1_000_000, reservedMinor: 0 });
    }, 60_000);
  });
});
