import { sellersAt } from '../support/adcp-env';
import { createTestEnv, json, type TestApi, type TestEnv } from '../support/api';
import { type BookingBody } from '../support/bookings';
import { until } from '../support/wait';
import { lossyProxies, type Seen } from '../support/lossy-proxy';
import { launchOnSeller } from '../support/adcp-buy';
import { productRef, startTestSeller, type TestSeller } from '../support/adcp-test-seller';
import { capabilitiesOf } from '../../shared/adapters/adcp/connection';
import { resendAllowed, taskVerdict, verdictOf } from '../../shared/adapters/adcp/outcomes';
import type { RunningWorkers } from '../../workers/main';

let seller: TestSeller;
let forgetful: TestSeller;
let amnesiac: TestSeller;
const proxies = lossyProxies();
let env: TestEnv;
let api: TestApi;
let workers: RunningWorkers;
const creates: Seen = [];
const forgetfulCreates: Seen = [];
const allLostCreates: Seen = [];
const amnesiacCreates: Seen = [];

beforeAll(async () => {
  seller = await startTestSeller();
  forgetful = await startTestSeller({ idempotent: false });
  amnesiac = await startTestSeller();
  amnesiac.forgetsReplies = true;
  env = await createTestEnv();
  const sellers = sellersAt({
    ctl: await proxies.to(new URL(seller.agentUrl).origin, creates, 1),
    spot: await proxies.to(new URL(forgetful.agentUrl).origin, forgetfulCreates, 1),
    acme: await proxies.to(new URL(seller.agentUrl).origin, allLostCreates, Infinity),
    'lax-sandbox': await proxies.to(new URL(amnesiac.agentUrl).origin, amnesiacCreates, 1),
  });
  api = await env.api({ ADCP_SELLERS: sellers });
  workers = await env.workers({
    ADCP_SELLERS: sellers,
    WORKER_QUEUES: 'supplier.adcp-ctl,supplier.adcp-spot,supplier.adcp-acme,supplier.adcp-lax-sandbox',
  });
}, 60_000);
afterAll(async () => {
  await workers?.close();
  await env?.close();
  proxies.close();
  await seller?.stop();
  await forgetful?.stop();
  await amnesiac?.stop();
});

async function settledLine(token: string, bookingId: string, status: string) {
  let done: BookingBody | null = null;
  await until(`the line is ${status}`, async () => {
    const r = await api.fetch(`/api/v1/bookings/${bookingId}`, { token });
    done = r.status === 200 ? (await json<{ booking: BookingBody }>(r)).booking : null;
    return done?.lines[0]?.status === status;
  });
  return done!.lines[0]!;
}

describe('a lost answer from an AdCP seller', () => {
  test('is asked again with the same key and body inside the replay window: the seller replays its first answer, and one buy is booked', async () => {
    const org = 'org-l1';
    const { token, booking } = await launchOnSeller(env, api, org, 'adcp-ctl', productRef('ctv_sync'));
    const line = await settledLine(token, booking.id, 'confirmed');
    expect(creates).toHaveLength(2);
    const first = /"media_buy_id\\?":\s*\\?"(mb_\w+?)\\?"/.exec(creates[0]!.answer)?.[1];
    expect(first).toBeDefined();
    // The second answer is the seller's replay of the first: the same buy, not a second one.
    expect(creates[1]!.answer).toContain(first!);
    expect(creates[1]!.answer).toMatch(/replayed/);
    expect(line.providerReference!.startsWith(`${first}/`)).toBe(true);
    // The seller's platform booked once: the resend was answered from its idempotency store.
    expect(seller.creates.filter((c) => (c.packages?.[0] as { buyer_ref?: string }).buyer_ref === line.id)).toHaveLength(1);
  }, 60_000);

  test('to a seller that declares no idempotency is never sent again, by us or beneath us: one create reached it, and the line goes to a person', async () => {
    const { token, booking } = await launchOnSeller(env, api, 'org-l2', 'adcp-spot', productRef('ctv_sync'));
    const line = await settledLine(token, booking.id, 'reconciliation-required');
    expect(forgetfulCreates).toHaveLength(1);
    expect(forgetful.creates.filter((c) => (c.packages?.[0] as { buyer_ref?: string }).buyer_ref === line.id)).toHaveLength(1);
  }, 60_000);

  test('rejected when sent again is not believed: a seller that kept no answer refuses the resend as a second buy, and the line goes to a person, not to rejected', async () => {
    const { token, booking } = await launchOnSeller(env, api, 'org-l4', 'adcp-lax-sandbox', productRef('ctv_sync'), {
      executionMode: 'sandbox',
    });
    const line = await settledLine(token, booking.id, 'reconciliation-required');
    // Both reached its platform: the first made the buy, the second was refused as a duplicate.
    expect(amnesiacCreates.map((c) => c.delivered)).toEqual([false, true]);
    expect(amnesiacCreates[1]!.answer).toMatch(/CONFLICT/);
    expect(amnesiac.creates.filter((c) => (c.packages?.[0] as { buyer_ref?: string }).buyer_ref === line.id)).toHaveLength(2);
    expect([...amnesiac.buys.values()].filter((b) => b.buyerRefs.includes(line.id))).toHaveLength(1);
    const attempt = await env.db('supplier_attempts').where({ line_id: line.id, operation: 'book' }).first('status', 'detail');
    expect(attempt.status).toBe('unknown');
    expect(JSON.stringify(attempt.detail)).toMatch(/rejected it when sent again \(CONFLICT/);
  }, 60_000);

  test('every answer lost: the same request goes out at most three more times (the resend rule), never more', async () => {
    const { token, booking } = await launchOnSeller(env, api, 'org-l3', 'adcp-acme', productRef('ctv_sync'));
    await settledLine(token, booking.id, 'reconciliation-required');
    expect(allLostCreates).toHaveLength(4);
    // Each send carried the same key and the same body.
    const sent = allLostCreates.map((c) => JSON.stringify((JSON.parse(c.request) as { params: { arguments: unknown } }).params.arguments));
    expect(new Set(sent).size).toBe(1);
    expect(sent[0]).toContain('"idempotency_key":"att_');
  }, 60_000);
});

describe('the resend rule', () => {
  const caps = (replay: number | undefined, supported = true) =>
    capabilitiesOf({ adcp: { major_versions: [3], idempotency: { supported, ...(replay ? { replay_ttl_seconds: replay } : {}) } } });

  test('resending is allowed only inside the declared replay window, less a margin, and never without a declaration', () => {
    const sent = Date.parse('2026-11-25T00:00:00Z');
    expect(resendAllowed(caps(3600), sent, sent + 3_000_000)).toBe(true);
    expect(resendAllowed(caps(3600), sent, sent + 3_541_000)).toBe(false);
    expect(resendAllowed(caps(undefined), sent, sent + 1)).toBe(false);
    expect(resendAllowed(caps(3600, false), sent, sent + 1)).toBe(false);
    expect(resendAllowed(null, sent, sent + 1)).toBe(false);
  });

  test('each answer maps to its outcome', () => {
    const meta = { metadata: { taskId: 'local', taskName: 'create_media_buy' } } as never;
    expect(
      verdictOf({
        ...(meta as object),
        status: 'completed',
        success: true,
        data: { media_buy_id: 'mb1', packages: [{ package_id: 'p1' }] },
      } as never),
    ).toEqual({
      kind: 'outcome',
      outcome: { kind: 'confirmed', providerReference: 'mb1/p1' },
    });
    expect(verdictOf({ ...(meta as object), status: 'submitted', success: true, submitted: { taskId: 'task_9' } } as never)).toEqual({
      kind: 'outcome',
      outcome: { kind: 'pending', taskId: 'task_9', supplierStatus: 'submitted' },
    });
    const failed = (code?: string, recovery?: string) =>
      verdictOf({
        ...(meta as object),
        status: 'failed',
        success: false,
        error: 'x',
        ...(code ? { adcpError: { code, message: 'm', recovery } } : {}),
      } as never);
    expect(failed()).toMatchObject({ kind: 'unknown' });
    expect(failed('IDEMPOTENCY_IN_FLIGHT')).toEqual({ kind: 'resend', why: 'IDEMPOTENCY_IN_FLIGHT', refusal: null });
    expect(failed('IDEMPOTENCY_CONFLICT')).toMatchObject({ kind: 'unknown' });
    expect(failed('SERVICE_UNAVAILABLE', 'transient')).toMatchObject({ kind: 'resend', refusal: { kind: 'rejected' } });
    expect(failed('PRODUCT_NOT_FOUND', 'correctable')).toEqual({
      kind: 'outcome',
      outcome: { kind: 'rejected', reason: 'PRODUCT_NOT_FOUND: m' },
    });
    expect(taskVerdict({ taskId: 't', status: 'working' })).toEqual({ kind: 'pending', taskId: 't', supplierStatus: 'working' });
    expect(taskVerdict({ taskId: 't', status: 'rejected', error: 'no inventory' })).toMatchObject({
      kind: 'rejected',
      reason: expect.stringContaining('no inventory'),
    });
    expect(taskVerdict({ taskId: 't', status: 'input-required', message: 'sign the IO' })).toMatchObject({ kind: 'workflow' });
    expect(taskVerdict({ taskId: 't', status: 'unknown' })).toBeNull();
  });
});
