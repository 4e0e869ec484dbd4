import { sellersAt } from '../support/adcp-env';
import http from 'node:http';
import { createTestEnv, json, type TestApi, type TestEnv } from '../support/api';
import { type BookingBody } from '../support/bookings';
import { until } from '../support/wait';
import { launchOnSeller } from '../support/adcp-buy';
import { productRef, startTestSeller, type TestSeller } from '../support/adcp-test-seller';
import { capabilitiesOf } from '../../shared/adapters/adcp/connection';
import { resendAllowed, taskVerdict, verdictOf } from '../../shared/adapters/adcp/outcomes';
import type { RunningWorkers } from '../../workers/main';

let seller: TestSeller;
let proxy: http.Server;
let env: TestEnv;
let api: TestApi;
let workers: RunningWorkers;
/** What the seller answered to each create_media_buy the proxy passed on, and whether the buyer got it. */
const creates: Array<{ answer: string; delivered: boolean }> = [];

/**
 * Between Flightdeck and the seller: passes everything on, but the seller's answer to the first
 * create_media_buy never reaches Flightdeck (the connection is cut after the seller acted).
 */
function lossyProxy(target: string): http.Server {
  return http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      const headers = new Headers();
      for (const [k, v] of Object.entries(req.headers)) {
        if (typeof v === 'string' && !['host', 'content-length', 'connection'].includes(k)) headers.set(k, v);
      }
      void (async () => {
        const upstream = await fetch(`${target}${req.url}`, {
          method: req.method,
          headers,
          ...(body.length ? { body } : {}),
        });
        const answer = Buffer.from(await upstream.arrayBuffer());
        const isCreate = body.toString().includes('"create_media_buy"');
        if (isCreate) {
          const delivered = creates.length > 0;
          creates.push({ answer: answer.toString(), delivered });
          if (!delivered) {
            req.socket.destroy();
            return;
          }
        }
        const out: Record<string, string> = {};
        upstream.headers.forEach((v, k) => {
          if (!['content-encoding', 'transfer-encoding', 'content-length', 'connection'].includes(k)) out[k] = v;
        });
        res.writeHead(upstream.status, out);
        res.end(answer);
      })().catch(() => req.socket.destroy());
    });
  });
}

beforeAll(async () => {
  seller = await startTestSeller();
  proxy = lossyProxy(new URL(seller.agentUrl).origin);
  await new Promise<void>((r) => proxy.listen(0, '127.0.0.1', r));
  const port = (proxy.address() as { port: number }).port;
  env = await createTestEnv();
  const sellers = sellersAt({ ctl: `http://127.0.0.1:${port}/mcp` });
  api = await env.api({ ADCP_SELLERS: sellers });
  workers = await env.workers({ ADCP_SELLERS: sellers, WORKER_QUEUES: 'supplier.adcp-ctl' });
}, 60_000);
afterAll(async () => {
  await workers?.close();
  await env?.close();
  proxy?.closeAllConnections();
  proxy?.close();
  await seller?.stop();
});

describe('a lost answer from an AdCP seller', () => {
  test('is asked again with the same key and body inside the replay window: the seller replays its first answer, and one buy is booked', async () => {
    const org = 'org-l1';
    const { token, booking } = await launchOnSeller(env, api, org, 'adcp-ctl', productRef('ctv_sync'));
    let done: BookingBody | null = null;
    await until('the line is confirmed', async () => {
      const r = await api.fetch(`/api/v1/bookings/${booking.id}`, { token });
      done = r.status === 200 ? (await json<{ booking: BookingBody }>(r)).booking : null;
      return done?.lines[0]?.status === 'confirmed';
    });
    expect(creates).toHaveLength(2);
    const first = /"media_buy_id\\?":\s*\\?"(mb_\w+?)\\?"/.exec(creates[0]!.answer)?.[1];
    expect(first).toBeDefined();
    // The second answer is the seller's replay of the first: the same buy, not a second one.
    expect(creates[1]!.answer).toContain(first!);
    expect(creates[1]!.answer).toMatch(/replayed/);
    expect(done!.lines[0]!.providerReference!.startsWith(`${first}/`)).toBe(true);
    // The seller's platform booked once: the resend was answered from its idempotency store.
    expect(seller.creates.filter((c) => (c.packages?.[0] as { buyer_ref?: string }).buyer_ref === done!.lines[0]!.id)).toHaveLength(1);
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
