import { createTestEnv, json, type TestApi, type TestEnv } from '../support/api';
import Stripe from 'stripe';
import { readWallet } from '../../shared/wallet/ledger';
import { SANDBOX_SECRET, session, signed } from './support';
import { subscribe } from '../support/webhooks';

let env: TestEnv;
let api: TestApi;
const t: Record<string, string> = {};
beforeAll(async () => {
  env = await createTestEnv();
  api = await env.api();
  t.buyer = await env.issuer.token({ org: 'org-a', user: 'payer-a' });
  // Subscribers are told of credits: a subscription, so that the event is kept to be read.
  await subscribe(env, api, 'org-a', ['funding.credited']);
  t.agent = await env.issuer.token({ org: 'org-a', user: 'payer-a', agent: 'bot' });
  t.operator = await env.issuer.token({ org: 'org-a', user: 'op-a', permissions: ['operator:reconcile'] });
  t.operatorAgent = await env.issuer.token({ org: 'org-a', user: 'op-a', permissions: ['operator:reconcile'], agent: 'bot' });
  t.foreignOperator = await env.issuer.token({ org: 'org-b', user: 'op-b', permissions: ['operator:reconcile'] });
});
afterAll(() => env.close());

const TOPUP = '/api/v1/billing/topup/requests';
const WEBHOOK = '/api/v1/billing/webhooks/payment-provider';

interface Created {
  request: { id: string; status: string; amountMinor: number; sessionId: string; checkoutUrl: string };
  checkoutUrl: string;
}

const topup = (token: string, body: unknown, key: string | null = crypto.randomUUID()) =>
  api.fetch(TOPUP, {
    method: 'POST',
    token,
    headers: { 'content-type': 'application/json', ...(key ? { 'idempotency-key': key } : {}) },
    body: JSON.stringify(body),
  });

async function created(amountMinor: number, token = t.buyer!): Promise<Created> {
  const res = await topup(token, { amountMinor, currency: 'GBP' });
  expect(res.status).toBe(201);
  return json<Created>(res);
}

const deliver = (payload: string, header?: string) =>
  api.fetch(WEBHOOK, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(header ? { 'stripe-signature': header } : {}) },
    body: payload,
  });

const paidEvent = (c: Created, over: Record<string, unknown> = {}, type = 'checkout.session.completed') =>
  signed(type, session({ id: c.request.sessionId, requestId: c.request.id, workspace: 'org-a', amount: c.request.amountMinor, ...over }));

const balance = async (org = 'org-a') => (await readWallet(env.db, org)).balanceMinor;
const count = async (table: string) => Number((await env.db(table).count({ n: '*' }))[0]!.n);
const footprint = async () => ({
  requests: await count('funding_requests'),
  entries: await count('wallet_entries'),
  events: await count('funding_events'),
  wallet: await readWallet(env.db, 'org-a'),
});

describe('top-up requests (a person funds the wallet)', () => {
  test('a person gets a committed, unguessable request and a checkout at the provider; nothing is credited yet', async () => {
    const c = await created(25_000);
    expect(c.request.id).toMatch(/^wtr-[a-f0-9]{64}$/);
    expect(c.request).toMatchObject({ status: 'open', amountMinor: 25_000 });
    expect(c.checkoutUrl).toBe(`${api.url}/billing/sandbox-checkout/${c.request.sessionId}`);
    expect(c.request.sessionId).toMatch(/^cs_test_/);
    expect(await env.db('wallet_entries').where({ subject_id: c.request.id })).toHaveLength(0);
  });

  test('paying on the checkout page credits the wallet once, through the signed settlement', async () => {
    const before = await balance();
    const c = await created(12_345);
    const page = await fetch(c.checkoutUrl);
    expect(page.status).toBe(200);
    expect(await page.text()).toContain('£123.45');
    const pay = () => fetch(c.checkoutUrl, { method: 'POST', body: new URLSearchParams({ action: 'pay' }), redirect: 'manual' });
    expect((await pay()).status).toBe(303);
    expect(await balance()).toBe(before + 12_345);
    // The page is closed now: paying again moves nothing.
    expect((await pay()).status).toBe(303);
    expect(await balance()).toBe(before + 12_345);
    const row = await env.db('funding_requests').where({ id: c.request.id }).first('status');
    expect(row.status).toBe('credited');
  });

  test('the same Idempotency-Key replays the first answer and opens no second request', async () => {
    const key = crypto.randomUUID();
    const first = await topup(t.buyer!, { amountMinor: 5_000, currency: 'GBP' }, key);
    const requests = await count('funding_requests');
    const again = await topup(t.buyer!, { amountMinor: 5_000, currency: 'GBP' }, key);
    expect(again.status).toBe(201);
    expect(await again.json()).toEqual(await first.json());
    expect(await count('funding_requests')).toBe(requests);
  });

  test.each([
    ['a delegated agent', () => t.agent!, { amountMinor: 5_000, currency: 'GBP' }, 403],
    ['an amount below the minimum', () => t.buyer!, { amountMinor: 999, currency: 'GBP' }, 400],
    ['an amount above the maximum', () => t.buyer!, { amountMinor: 10_000_001, currency: 'GBP' }, 400],
    ['a fractional amount', () => t.buyer!, { amountMinor: 1000.5, currency: 'GBP' }, 400],
    ['an amount as a string', () => t.buyer!, { amountMinor: '5000', currency: 'GBP' }, 400],
    ['another currency', () => t.buyer!, { amountMinor: 5_000, currency: 'USD' }, 400],
    ['no currency', () => t.buyer!, { amountMinor: 5_000 }, 400],
    ['an unknown field', () => t.buyer!, { amountMinor: 5_000, currency: 'GBP', workspace: 'org-b' }, 400],
  ])('%s is refused and nothing is stored', async (_what, token, body, status) => {
    const before = await footprint();
    const res = await topup(token(), body);
    expect(res.status).toBe(status);
    expect(res.headers.get('content-type')).toMatch(/application\/problem\+json/);
    expect(await footprint()).toEqual(before);
  });

  test('a request without an Idempotency-Key is refused and nothing is stored', async () => {
    const before = await footprint();
    expect((await topup(t.buyer!, { amountMinor: 5_000, currency: 'GBP' }, null)).status).toBe(400);
    expect(await footprint()).toEqual(before);
  });
});

describe('signed settlement (the only way money enters a wallet)', () => {
  test('a correctly signed payment credits once; a replay of the same event is acknowledged and moves nothing', async () => {
    const c = await created(7_000);
    const before = await balance();
    const { payload, header } = paidEvent(c);
    const res = await deliver(payload, header);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ received: true, result: 'credited' });
    expect(await json(await deliver(payload, header))).toEqual({ received: true, result: 'duplicate' });
    expect(await balance()).toBe(before + 7_000);
    // Nothing secret is logged: neither the signing secret nor the signature.
    const logs = api.rawLogs.join('\n');
    expect(logs).not.toContain(SANDBOX_SECRET);
    expect(logs).not.toContain(header);
  });

  test.each([
    [
      'signed with the wrong secret',
      (p: string) => signed('checkout.session.completed', JSON.parse(p).data.object, { secret: 'whsec_wrong_secret_value' }),
    ],
    [
      'signed more than 300 s ago',
      (p: string) => signed('checkout.session.completed', JSON.parse(p).data.object, { timestamp: Math.floor(Date.now() / 1000) - 301 }),
    ],
    ['altered after signing', (p: string, h: string) => ({ payload: p.replace('"amount_total":8000', '"amount_total":8001'), header: h })],
    ['unsigned', (p: string) => ({ payload: p, header: '' })],
    [
      'that is not JSON, however well signed',
      () => {
        const payload = 'amount_total=8000&currency=gbp';
        return { payload, header: Stripe.webhooks.generateTestHeaderString({ payload, secret: SANDBOX_SECRET }) };
      },
    ],
  ])('an event %s is refused with 400 and changes nothing', async (_what, make) => {
    const c = await created(8_000);
    const good = paidEvent(c);
    const bad = make(good.payload, good.header);
    const before = await footprint();
    const res = await deliver(bad.payload, bad.header || undefined);
    expect(res.status).toBe(400);
    expect(await json(res)).toMatchObject({ code: 'invalid_signature' });
    expect(await footprint()).toEqual(before);
  });

  test('20 concurrent deliveries of one payment credit the wallet exactly once', async () => {
    const c = await created(9_100);
    const before = await balance();
    const { payload, header } = paidEvent(c);
    const results = await Promise.all(Array.from({ length: 20 }, () => deliver(payload, header).then((r) => json<{ result: string }>(r))));
    expect(results.filter((r) => r.result === 'credited')).toHaveLength(1);
    expect(results.filter((r) => r.result === 'duplicate')).toHaveLength(19);
    expect(await balance()).toBe(before + 9_100);
    expect(await env.db('wallet_entries').where({ kind: 'funding_credit', subject_id: c.request.id })).toHaveLength(1);
    // Subscribers are told once, with the credit.
    const events = await env.db('webhook_events').where({ type: 'funding.credited', subject_id: c.request.id });
    expect(events.map((e) => e.body)).toEqual([{ fundingRequestId: c.request.id, amountMinor: 9_100, currency: 'GBP' }]);
  });

  test('different events of one payment racing each other still credit once', async () => {
    const c = await created(9_200);
    const before = await balance();
    const events = [
      paidEvent(c),
      paidEvent(c, {}, 'checkout.session.async_payment_succeeded'),
      paidEvent(c),
      paidEvent(c, {}, 'checkout.session.async_payment_succeeded'),
    ];
    await Promise.all(events.map((e) => deliver(e.payload, e.header)));
    expect(await balance()).toBe(before + 9_200);
  });

  test('out of order: an expiry after the payment leaves it credited; a payment after a failure credits it', async () => {
    const a = await created(3_000);
    const b = await created(4_000);
    const before = await balance();
    for (const e of [paidEvent(a), paidEvent(a, { status: 'expired', payment_status: 'unpaid' }, 'checkout.session.expired')])
      await deliver(e.payload, e.header);
    for (const e of [
      paidEvent(b, { payment_status: 'unpaid' }, 'checkout.session.async_payment_failed'),
      paidEvent(b, {}, 'checkout.session.async_payment_succeeded'),
    ])
      await deliver(e.payload, e.header);
    expect(await balance()).toBe(before + 7_000);
    const statuses = await env.db('funding_requests').whereIn('id', [a.request.id, b.request.id]).pluck('status');
    expect(statuses).toEqual(['credited', 'credited']);
  });

  test.each([
    ['amount', { amount: 1 }],
    ['currency', { currency: 'eur' }],
    ['workspace', { workspace: 'org-b' }],
  ])('a payment whose %s differs from the request credits nothing, marks it mismatch and keeps the event', async (_what, over) => {
    const c = await created(6_000);
    const before = await balance();
    const { payload, header } = paidEvent(c, over);
    expect(await json(await deliver(payload, header))).toEqual({ received: true, result: 'mismatch' });
    expect(await balance()).toBe(before);
    expect((await env.db('funding_requests').where({ id: c.request.id }).first()).status).toBe('mismatch');
    expect(await env.db('funding_events').where({ request_id: c.request.id })).toHaveLength(1);
  });
});

describe('live billing without its secrets', () => {
  test('accepts no event at all, not even one signed with an empty secret, and opens no checkout', async () => {
    const live = await env.api({ BILLING_MODE: 'live' });
    const c = await created(5_500);
    const { payload, header } = signed(
      'checkout.session.completed',
      session({ id: c.request.sessionId, requestId: c.request.id, workspace: 'org-a', amount: 5_500 }),
      { secret: '' },
    );
    const before = await footprint();
    const res = await live.fetch(WEBHOOK, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'stripe-signature': header },
      body: payload,
    });
    expect(res.status).toBe(503);
    expect(await footprint()).toEqual(before);
    const open = await live.fetch(TOPUP, {
      method: 'POST',
      token: t.buyer,
      headers: { 'content-type': 'application/json', 'idempotency-key': crypto.randomUUID() },
      body: JSON.stringify({ amountMinor: 5_000, currency: 'GBP' }),
    });
    expect(open.status).toBe(503);
    await live.close();
  });
});
