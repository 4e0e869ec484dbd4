import { createTestEnv, json, type TestApi, type TestEnv } from '../support/api';
import { readWallet } from '../../shared/wallet/ledger';
import type { CheckoutSession } from '../../shared/billing/provider';

let env: TestEnv;
let api: TestApi;
const t: Record<string, string> = {};
beforeAll(async () => {
  env = await createTestEnv();
  api = await env.api();
  t.buyer = await env.issuer.token({ org: 'org-a', user: 'payer-a' });
  t.operator = await env.issuer.token({ org: 'org-a', user: 'op-a', permissions: ['operator:reconcile'] });
  t.operatorAgent = await env.issuer.token({ org: 'org-a', user: 'op-a', permissions: ['operator:reconcile'], agent: 'bot' });
  t.plain = await env.issuer.token({ org: 'org-a', user: 'viewer-a' });
  t.foreignOperator = await env.issuer.token({ org: 'org-b', user: 'op-b', permissions: ['operator:reconcile'] });
});
afterAll(() => env.close());

const TOPUP = '/api/v1/billing/topup/requests';

async function created(amountMinor: number) {
  const res = await api.fetch(TOPUP, {
    method: 'POST',
    token: t.buyer,
    headers: { 'content-type': 'application/json', 'idempotency-key': crypto.randomUUID() },
    body: JSON.stringify({ amountMinor, currency: 'GBP' }),
  });
  expect(res.status).toBe(201);
  return (await json<{ request: { id: string; sessionId: string } }>(res)).request;
}

/** The provider's side moves on without telling us: the payment went through, its event was lost. */
async function paidAtProviderOnly(sessionId: string) {
  const row = await env.db('sandbox_checkout_sessions').where({ id: sessionId }).first();
  const session = { ...(row.session as CheckoutSession), status: 'complete', payment_status: 'paid' };
  await env
    .db('sandbox_checkout_sessions')
    .where({ id: sessionId })
    .update({ session: JSON.stringify(session) });
}

const reconcile = (token: string, requestId: string, body: unknown, headers: Record<string, string> = {}) =>
  api.fetch(`${TOPUP}/${requestId}/reconcile`, {
    method: 'POST',
    token,
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });
const inspect = (token: string, requestId: string, headers: Record<string, string> = {}) =>
  api.fetch(`${TOPUP}/${requestId}`, { token, headers });

describe('reconcile (spec 27) never credits', () => {
  test('a session paid at the provider but never settled is matched, the balance stays, and the answer says how to get the event resent', async () => {
    const request = await created(15_000);
    await paidAtProviderOnly(request.sessionId);
    const before = await readWallet(env.db, 'org-a');
    const res = await reconcile(t.operator!, request.id, { sessionId: request.sessionId });
    expect(res.status).toBe(200);
    const body = await json<{ reconciliation: { result: string; detail: { note: string } }; credited: boolean }>(res);
    expect(body.reconciliation.result).toBe('matched');
    expect(body.credited).toBe(false);
    expect(body.reconciliation.detail.note).toMatch(/deliver the event again/);
    expect(await readWallet(env.db, 'org-a')).toEqual(before);
    expect(await env.db('wallet_entries').where({ subject_id: request.id })).toHaveLength(0);

    // The inspection shows the reconciliation as evidence, with no settlement and no ledger entry.
    const seen = await json<{
      request: { status: string };
      settlementEvents: unknown[];
      ledgerEntries: unknown[];
      reconciliations: unknown[];
    }>(await inspect(t.operator!, request.id));
    expect(seen.request.status).toBe('open');
    expect(seen.settlementEvents).toEqual([]);
    expect(seen.ledgerEntries).toEqual([]);
    expect(seen.reconciliations).toHaveLength(1);
  });

  test('an unpaid session is unpaid; an unknown one is not-found; both are recorded', async () => {
    const request = await created(2_000);
    const unpaid = await json<{ reconciliation: { result: string } }>(
      await reconcile(t.operator!, request.id, { sessionId: request.sessionId }),
    );
    expect(unpaid.reconciliation.result).toBe('unpaid');
    const unknown = await json<{ reconciliation: { result: string } }>(
      await reconcile(t.operator!, request.id, { sessionId: 'cs_test_doesnotexist' }),
    );
    expect(unknown.reconciliation.result).toBe('not-found');
    expect(await env.db('funding_reconciliations').where({ request_id: request.id })).toHaveLength(2);
  });

  test('a session that belongs to another request is a 409 and records nothing', async () => {
    const a = await created(2_100);
    const b = await created(2_200);
    const res = await reconcile(t.operator!, a.id, { sessionId: b.sessionId });
    expect(res.status).toBe(409);
    expect(await json(res)).toMatchObject({ code: 'session_mismatch' });
    expect(await env.db('funding_reconciliations').where({ request_id: a.id })).toHaveLength(0);
  });
});

describe('who may inspect and reconcile (spec 26, 27)', () => {
  test('another workspace’s request is a 404 byte-identical to one that never existed', async () => {
    const request = await created(2_300);
    const never = `wtr-${'0'.repeat(64)}`;
    const h = { 'x-request-id': 'same-request-id-1' };
    for (const [a, b] of [
      [await inspect(t.foreignOperator!, request.id, h), await inspect(t.foreignOperator!, never, h)],
      [
        await reconcile(t.foreignOperator!, request.id, { sessionId: request.sessionId }, h),
        await reconcile(t.foreignOperator!, never, { sessionId: request.sessionId }, h),
      ],
    ]) {
      expect(a!.status).toBe(404);
      expect(await a!.text()).toBe(await b!.text());
    }
  });

  test.each([
    ['a delegated agent', 'operatorAgent', 403],
    ['a person without operator:reconcile', 'plain', 403],
  ])('%s is refused', async (_who, token, status) => {
    const request = await created(2_400);
    expect((await inspect(t[token]!, request.id)).status).toBe(status);
    expect((await reconcile(t[token]!, request.id, { sessionId: request.sessionId })).status).toBe(status);
    expect(await env.db('funding_reconciliations').where({ request_id: request.id })).toHaveLength(0);
  });

  test.each([
    ['a malformed request id', 'wtr-XYZ', { sessionId: 'cs_test_x' }],
    ['a malformed session id', null, { sessionId: 'pi_123' }],
    ['a session id over 255 characters', null, { sessionId: `cs_${'a'.repeat(260)}` }],
    ['an unknown field', null, { sessionId: 'cs_test_x', credit: true }],
    ['no session id', null, {}],
  ])('%s is a 400 and records nothing', async (_what, id, body) => {
    const request = await created(2_500);
    const res = await reconcile(t.operator!, id ?? request.id, body);
    expect(res.status).toBe(400);
    expect(await env.db('funding_reconciliations').where({ request_id: request.id })).toHaveLength(0);
  });
});

describe('a payment provider that cannot be reached', () => {
  test('top-up and reconcile answer 503 with retry-after, and no open request is left behind', async () => {
    const live = await env.api({
      BILLING_MODE: 'live',
      STRIPE_SECRET_KEY: 'sk_test_unreachable',
      STRIPE_WEBHOOK_SECRET: 'whsec_unreachable_provider',
      STRIPE_API_URL: 'http://127.0.0.1:9',
    });
    const res = await live.fetch(TOPUP, {
      method: 'POST',
      token: t.buyer,
      headers: { 'content-type': 'application/json', 'idempotency-key': crypto.randomUUID() },
      body: JSON.stringify({ amountMinor: 5_000, currency: 'GBP' }),
    });
    expect(res.status).toBe(503);
    expect(res.headers.get('retry-after')).toBeTruthy();
    expect(await json(res)).toMatchObject({ code: 'payment_provider_unavailable', recovery: 'transient' });
    expect(await env.db('funding_requests').where({ provider: 'stripe' }).whereNot('status', 'failed')).toHaveLength(0);

    const request = await created(2_600);
    const rec = await live.fetch(`${TOPUP}/${request.id}/reconcile`, {
      method: 'POST',
      token: t.operator,
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ sessionId: request.sessionId }),
    });
    expect(rec.status).toBe(503);
    await live.close();
  });
});
