import { sellersAt } from '../support/adcp-env';
import { generateKeyPairSync, randomUUID } from 'node:crypto';
import { signWebhook } from '@adcp/sdk/signing/client';
import { createTestEnv, expectProblem, json, type TestApi, type TestEnv } from '../support/api';
import { until } from '../support/wait';
import { walletAndLedger } from '../support/wallet';
import { launchOnSeller } from '../support/adcp-buy';
import { productRef, startTestSeller, type TestSeller } from '../support/adcp-test-seller';
import type { RunningWorkers } from '../../workers/main';

/**
 * Sellers push a booking's outcome by RFC 9421-signed webhook (docs/adcp.md, "Webhooks"): only
 * a signature by a key the seller publishes, fresh and never seen before, may settle a line.
 * Polling is an hour away here, so a line settles only by webhook unless the test polls.
 */
let seller: TestSeller;
let env: TestEnv;
let api: TestApi;
let workers: RunningWorkers;
let hookUrl: string;

beforeAll(async () => {
  seller = await startTestSeller();
  env = await createTestEnv();
  const sellers = sellersAt({ ctl: seller.agentUrl }, { ctl: seller.jwksUrl });
  api = await env.api({ ADCP_SELLERS: sellers });
  hookUrl = `${api.deps.urls.base}/api/v1/adapters/adcp-ctl/webhooks`;
  workers = await env.workers({
    ADCP_SELLERS: sellers,
    PUBLIC_BASE_URL: api.deps.urls.base,
    ADCP_TASK_POLL_INTERVAL_MS: '3600000',
    WORKER_QUEUES: 'supplier.adcp-ctl',
  });
}, 60_000);
afterAll(async () => {
  await workers?.close();
  await env?.close();
  await seller?.stop();
});

/** A live line the seller holds as a task (submitted), waiting. */
async function pendingLine(org: string) {
  const { booking } = await launchOnSeller(env, api, org, 'adcp-ctl', productRef('ctv_async'));
  const lineId = booking.lines[0]!.id;
  let task: { task_id: string; attempt_id: string } | undefined;
  await until('the seller answers submitted', async () => {
    task = await env.db('supplier_tasks').where({ line_id: lineId }).first();
    return !!task;
  });
  return { bookingId: booking.id, lineId, taskId: task!.task_id, attemptId: task!.attempt_id };
}

/** A completed create_media_buy task, as the seller's webhook carries it. */
const completion = (taskId: string, mediaBuyId = `mb_${randomUUID().slice(0, 8)}`) =>
  JSON.stringify({
    idempotency_key: randomUUID(),
    task_id: taskId,
    task_type: 'create_media_buy',
    status: 'completed',
    timestamp: new Date().toISOString(),
    protocol: 'media-buy',
    result: {
      media_buy_id: mediaBuyId,
      status: 'pending_creatives',
      packages: [{ package_id: 'pkg_w', product_id: 'ctv_async', budget: 1000 }],
    },
  });

/** The headers of a webhook body signed with `key` (the seller's own, unless a test forges one). */
function signed(body: string, key = seller.signingKey, now?: number) {
  const request = { method: 'POST', url: hookUrl, headers: { 'content-type': 'application/json' }, body };
  const { headers } = signWebhook(request, key as never, now ? { now: () => now } : {});
  return { 'content-type': 'application/json', ...headers };
}

const deliver = (body: string, headers: Record<string, string>) => fetch(hookUrl, { method: 'POST', headers, body });

/** Everything a refused webhook must leave alone. */
const state = async (lineId: string, attemptId: string) => ({
  line: await env.db('booking_lines').where({ id: lineId }).first(),
  task: await env.db('supplier_tasks').where({ attempt_id: attemptId }).first(),
  attempt: await env.db('supplier_attempts').where({ id: attemptId }).first(),
  events: await env.db('booking_events').where({ line_id: lineId }).count('* as n'),
});

const expectRefused = (res: Response, code: string) => expectProblem(res, 401, code);

describe("a seller's signed webhooks", () => {
  test("the seller's own webhook settles a booking it finished, with no poll: the create asked for it, signed by a published key", async () => {
    const { lineId, taskId, attemptId } = await pendingLine('org-w1');
    const create = seller.creates.find((c) => (c.packages?.[0] as { buyer_ref?: string }).buyer_ref === lineId)!;
    expect(create.push_notification_config).toEqual({ url: hookUrl });
    seller.finish(taskId);
    await until(
      'the webhook confirms the line',
      async () => (await env.db('booking_lines').where({ id: lineId }).first()).status === 'confirmed',
    );
    const line = await env.db('booking_lines').where({ id: lineId }).first();
    expect(line.provider_reference).toMatch(/^mb_\w+\/pkg_\w+$/);
    expect(await env.db('supplier_tasks').where({ attempt_id: attemptId }).first()).toMatchObject({ status: 'done', polls: 0 });
    expect((await walletAndLedger(env, 'org-w1')).consistent).toBe(true);
  }, 60_000);

  test('unsigned, forged, stale and replayed webhooks are refused with problem+json and change nothing', async () => {
    const { lineId, taskId, attemptId } = await pendingLine('org-w2');
    const before = await state(lineId, attemptId);
    const body = completion(taskId, 'mb_forged');

    await expectRefused(await deliver(body, { 'content-type': 'application/json' }), 'webhook_signature_header_malformed');

    // A key the seller does not publish, even under the seller's key id.
    const { privateKey } = generateKeyPairSync('ed25519');
    const other = privateKey.export({ format: 'jwk' }) as Record<string, string>;
    const forged = { ...seller.signingKey, privateKey: { ...seller.signingKey.privateKey, x: other.x!, d: other.d! } };
    await expectRefused(await deliver(body, signed(body, forged)), 'webhook_signature_invalid');
    const stranger = { ...forged, keyid: 'not-the-sellers', privateKey: { ...forged.privateKey, kid: 'not-the-sellers' } };
    await expectRefused(await deliver(body, signed(body, stranger)), 'webhook_signature_key_unknown');

    // Signed by the seller ten minutes ago: outside the signature window.
    await expectRefused(
      await deliver(body, signed(body, seller.signingKey, Math.floor(Date.now() / 1000) - 600)),
      'webhook_signature_window_invalid',
    );

    // A body changed after signing.
    const headers = signed(body);
    await expectRefused(await deliver(body.replace('mb_forged', 'mb_other'), headers), 'webhook_signature_digest_mismatch');

    expect(await state(lineId, attemptId)).toEqual(before);

    // The seller's genuine webhook settles it; the same delivery again is a replay, refused.
    const genuine = completion(taskId, 'mb_genuine');
    const genuineHeaders = signed(genuine);
    const first = await deliver(genuine, genuineHeaders);
    expect(first.status).toBe(200);
    expect(await json(first)).toEqual({ result: 'settled' });
    const settled = await state(lineId, attemptId);
    expect(settled.line).toMatchObject({ status: 'confirmed', provider_reference: 'mb_genuine/pkg_w' });
    await expectRefused(await deliver(genuine, genuineHeaders), 'webhook_signature_replayed');
    expect(await state(lineId, attemptId)).toEqual(settled);
  }, 60_000);

  test('webhooks racing a poll settle the line once', async () => {
    const { lineId, taskId, attemptId } = await pendingLine('org-w3');
    // The seller finishes (its own webhook goes out), a poll asks at the same moment, and a second
    // signed delivery arrives too: three answers at once.
    const body = completion(taskId, 'mb_race');
    await env.db('supplier_tasks').where({ attempt_id: attemptId }).update({ next_poll_at: env.db.fn.now() });
    seller.finish(taskId);
    const [hook] = await Promise.all([deliver(body, signed(body)), workers.pollSupplierTasksNow()]);
    expect(hook.status).toBe(200);
    await until('the line is confirmed', async () => (await env.db('booking_lines').where({ id: lineId }).first()).status === 'confirmed');
    await new Promise((r) => setTimeout(r, 1_000));
    expect(await env.db('booking_events').where({ line_id: lineId, action: 'line.confirmed' })).toHaveLength(1);
    expect(await env.db('supplier_attempts').where({ id: attemptId }).first()).toMatchObject({ status: 'confirmed' });
    expect((await walletAndLedger(env, 'org-w3')).consistent).toBe(true);
  }, 60_000);

  test("a seller that publishes no keys takes no webhooks; a signed body that is no task's outcome is refused; another task's is acknowledged and changes nothing", async () => {
    const body = completion('task_unknown_here');
    const noKeys = await fetch(hookUrl.replace('adcp-ctl', 'adcp-acme'), { method: 'POST', headers: signed(body), body });
    expect(noKeys.status).toBe(404);
    const notJson = 'not json';
    const refused = await deliver(notJson, signed(notJson));
    expect(refused.status).toBe(400);
    expect((await json<{ code: string }>(refused)).code).toBe('webhook_body_invalid');
    const before = await env.db('supplier_tasks').orderBy('attempt_id');
    const other = await deliver(body, signed(body));
    expect(other.status).toBe(200);
    expect(await json(other)).toEqual({ result: 'nothing-waiting' });
    expect(await env.db('supplier_tasks').orderBy('attempt_id')).toEqual(before);
  }, 60_000);
});
