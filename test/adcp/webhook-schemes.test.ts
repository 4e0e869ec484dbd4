import { createHmac, randomUUID } from 'node:crypto';
import { createWebhookEmitter } from '@adcp/sdk/server';
import { signWebhook } from '@adcp/sdk/signing/client';
import { sellersAt } from '../support/adcp-env';
import { createTestEnv, expectProblem, json, type TestApi, type TestEnv } from '../support/api';
import { until } from '../support/wait';
import { walletAndLedger } from '../support/wallet';
import { launchOnSeller } from '../support/adcp-buy';
import { productRef, startTestSeller, type TestSeller } from '../support/adcp-test-seller';
import { secretBoxOf } from '../../shared/crypto/secret-box';
import type { RunningWorkers } from '../../workers/main';

/**
 * Sellers that authenticate their webhooks AdCP 3.0's legacy way, as Prebid's Sales Agent does
 * (HMAC-SHA256 over the body) or with a bearer token: the secret is issued by Flightdeck, sealed at
 * rest, and sent in every booking's push_notification_config; webhooks are signed here by the
 * SDK's own webhook emitter, as a seller on the SDK would sign them. Unsigned, wrongly signed,
 * stale, replayed and other-scheme webhooks are refused and change nothing.
 */
let hmacSeller: TestSeller;
let bearerSeller: TestSeller;
let env: TestEnv;
let api: TestApi;
let workers: RunningWorkers;
const hookUrl = (key: string) => `${api.deps.urls.base}/api/v1/adapters/${key}/webhooks`;

beforeAll(async () => {
  [hmacSeller, bearerSeller] = await Promise.all([startTestSeller(), startTestSeller()]);
  env = await createTestEnv();
  const sellers = JSON.stringify(
    (JSON.parse(sellersAt({ ctl: hmacSeller.agentUrl, spot: bearerSeller.agentUrl })) as Array<{ key: string }>).map((s) =>
      s.key === 'ctl' ? { ...s, webhookAuth: 'hmac-sha256' } : s.key === 'spot' ? { ...s, webhookAuth: 'bearer' } : s,
    ),
  );
  api = await env.api({ ADCP_SELLERS: sellers });
  workers = await env.workers({
    ADCP_SELLERS: sellers,
    PUBLIC_BASE_URL: api.deps.urls.base,
    ADCP_TASK_POLL_INTERVAL_MS: '3600000',
    WORKER_QUEUES: 'supplier.adcp-ctl,supplier.adcp-spot',
  });
}, 60_000);
afterAll(async () => {
  await workers?.close();
  await env?.close();
  await Promise.all([hmacSeller, bearerSeller].map((s) => s?.stop()));
});

/** A live line the seller holds as a task, and the push configuration its booking carried. */
async function pendingLine(org: string, seller: TestSeller, adapterKey: string) {
  const { booking } = await launchOnSeller(env, api, org, adapterKey, productRef('ctv_async'));
  const lineId = booking.lines[0]!.id;
  let task: { task_id: string; attempt_id: string } | undefined;
  await until('the seller answers submitted', async () => {
    task = await env.db('supplier_tasks').where({ line_id: lineId }).first();
    return !!task;
  });
  const create = seller.creates.find((c) => (c.packages?.[0] as { buyer_ref?: string }).buyer_ref === lineId)!;
  const push = create.push_notification_config as { url: string; authentication?: { schemes: string[]; credentials: string } };
  return { lineId, taskId: task!.task_id, attemptId: task!.attempt_id, push };
}

const completion = (taskId: string, mediaBuyId: string, at = new Date()) => ({
  task_id: taskId,
  task_type: 'create_media_buy',
  status: 'completed',
  timestamp: at.toISOString(),
  protocol: 'media-buy',
  result: {
    media_buy_id: mediaBuyId,
    status: 'pending_creatives',
    packages: [{ package_id: 'pkg_h', product_id: 'ctv_async', budget: 1000 }],
  },
});

/** Everything a refused webhook must leave alone. */
const state = async (lineId: string, attemptId: string) => ({
  line: await env.db('booking_lines').where({ id: lineId }).first(),
  task: await env.db('supplier_tasks').where({ attempt_id: attemptId }).first(),
  events: await env.db('booking_events').where({ line_id: lineId }).count('* as n'),
});

const expectRefused = (res: Response, code: string) => expectProblem(res, 401, code);

const post = (key: string, body: string, headers: Record<string, string>) =>
  fetch(hookUrl(key), { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body });

/** HMAC-SHA256 headers over `<ts>.<body>`, as AdCP 3.0's legacy scheme signs. */
const hmacHeaders = (body: string, secret: string, ts = Math.floor(Date.now() / 1000)) => ({
  'x-adcp-timestamp': String(ts),
  'x-adcp-signature': `sha256=${createHmac('sha256', secret).update(`${ts}.${body}`).digest('hex')}`,
});

describe('a seller that signs its webhooks with HMAC-SHA256 (as Prebid Sales Agent does)', () => {
  test('each booking carries the secret issued to the seller, sealed at rest; the SDK-signed webhook settles the line', async () => {
    const first = await pendingLine('org-h1', hmacSeller, 'adcp-ctl');
    const second = await pendingLine('org-h2', hmacSeller, 'adcp-ctl');
    expect(first.push.url).toBe(hookUrl('adcp-ctl'));
    expect(first.push.authentication?.schemes).toEqual(['HMAC-SHA256']);
    const secret = first.push.authentication!.credentials;
    expect(secret.length).toBeGreaterThanOrEqual(32);
    // One secret per seller (a resend's body is unchanged), kept sealed.
    expect(second.push.authentication?.credentials).toBe(secret);
    const stored = await env.db('adcp_webhook_secrets').where({ adapter_key: 'adcp-ctl' }).first();
    expect(stored.scheme).toBe('hmac-sha256');
    expect(stored.secret).toMatch(/^sealed:v1:/);
    expect(stored.secret).not.toContain(secret);
    expect(secretBoxOf(env.config()).open(stored.secret)).toBe(secret);

    const emitter = createWebhookEmitter({
      signerKey: hmacSeller.signingKey as never,
      suppressLegacyWarnings: true,
      retries: { maxAttempts: 1 },
    });
    const sent = await emitter.emit({
      url: first.push.url,
      operation_id: `op_${randomUUID()}`,
      payload: completion(first.taskId, 'mb_hmac') as never,
      authentication: { type: 'hmac_sha256', secret } as never,
    });
    expect(sent.delivered).toBe(true);
    await until(
      'the line is confirmed',
      async () => (await env.db('booking_lines').where({ id: first.lineId }).first()).status === 'confirmed',
    );
    expect((await env.db('booking_lines').where({ id: first.lineId }).first()).provider_reference).toBe('mb_hmac/pkg_h');
    expect((await walletAndLedger(env, 'org-h1')).consistent).toBe(true);
  }, 60_000);

  test('unsigned, wrongly signed, stale, RFC 9421-signed and replayed webhooks are refused and change nothing', async () => {
    const { lineId, taskId, attemptId, push } = await pendingLine('org-h3', hmacSeller, 'adcp-ctl');
    const secret = push.authentication!.credentials;
    const before = await state(lineId, attemptId);
    const body = JSON.stringify(completion(taskId, 'mb_forged'));

    await expectRefused(await post('adcp-ctl', body, {}), 'webhook_signature_missing');
    await expectRefused(
      await post('adcp-ctl', body, hmacHeaders(body, 'not-the-issued-secret-at-all-000000')),
      'webhook_signature_invalid',
    );
    await expectRefused(
      await post('adcp-ctl', body, hmacHeaders(body, secret, Math.floor(Date.now() / 1000) - 600)),
      'webhook_signature_window_invalid',
    );
    // Signed for another body.
    await expectRefused(
      await post('adcp-ctl', body.replace('mb_forged', 'mb_other'), hmacHeaders(body, secret)),
      'webhook_signature_invalid',
    );
    // Signed the RFC 9421 way by the seller's own key: not the scheme it is registered with.
    const { headers } = signWebhook(
      { method: 'POST', url: hookUrl('adcp-ctl'), headers: { 'content-type': 'application/json' }, body },
      hmacSeller.signingKey as never,
    );
    await expectRefused(await post('adcp-ctl', body, headers), 'webhook_mode_mismatch');
    expect(await state(lineId, attemptId)).toEqual(before);

    // A genuine delivery settles; the same delivery again is a replay.
    const genuine = JSON.stringify(completion(taskId, 'mb_genuine'));
    const signed = hmacHeaders(genuine, secret);
    const ok = await post('adcp-ctl', genuine, signed);
    expect(ok.status).toBe(200);
    expect(await json(ok)).toEqual({ result: 'settled' });
    const settled = await state(lineId, attemptId);
    expect(settled.line.status).toBe('confirmed');
    await expectRefused(await post('adcp-ctl', genuine, signed), 'webhook_signature_replayed');
    expect(await state(lineId, attemptId)).toEqual(settled);
  }, 60_000);
});

describe('a seller that authenticates its webhooks with a bearer token', () => {
  test("the issued token settles the line; a missing or wrong token, a stale or unkeyed body, a replay and another scheme's signature change nothing", async () => {
    const { lineId, taskId, attemptId, push } = await pendingLine('org-b1', bearerSeller, 'adcp-spot');
    expect(push.authentication?.schemes).toEqual(['Bearer']);
    const token = push.authentication!.credentials;
    const before = await state(lineId, attemptId);
    const keyed = (payload: object) => JSON.stringify({ ...payload, idempotency_key: randomUUID() });
    const body = keyed(completion(taskId, 'mb_forged'));

    await expectRefused(await post('adcp-spot', body, {}), 'webhook_signature_missing');
    await expectRefused(await post('adcp-spot', body, { authorization: 'Bearer not-the-token' }), 'webhook_signature_invalid');
    const stale = keyed(completion(taskId, 'mb_stale', new Date(Date.now() - 600_000)));
    await expectRefused(await post('adcp-spot', stale, { authorization: `Bearer ${token}` }), 'webhook_signature_window_invalid');
    const unkeyed = JSON.stringify(completion(taskId, 'mb_unkeyed'));
    await expectRefused(await post('adcp-spot', unkeyed, { authorization: `Bearer ${token}` }), 'webhook_signature_params_incomplete');
    await expectRefused(await post('adcp-spot', body, hmacHeaders(body, token)), 'webhook_mode_mismatch');
    expect(await state(lineId, attemptId)).toEqual(before);

    const genuine = keyed(completion(taskId, 'mb_bearer'));
    const ok = await post('adcp-spot', genuine, { authorization: `Bearer ${token}` });
    expect(ok.status).toBe(200);
    const settled = await state(lineId, attemptId);
    expect(settled.line).toMatchObject({ status: 'confirmed', provider_reference: 'mb_bearer/pkg_h' });
    await expectRefused(await post('adcp-spot', genuine, { authorization: `Bearer ${token}` }), 'webhook_signature_replayed');
    expect(await state(lineId, attemptId)).toEqual(settled);
  }, 60_000);
});
