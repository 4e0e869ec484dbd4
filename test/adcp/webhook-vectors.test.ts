import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { createTestEnv, type TestEnv } from '../support/api';
import { AdcpSellerConnection } from '../../shared/adapters/adcp/connection';
import { AdcpWebhookReceiver, WebhookRefused } from '../../shared/adapters/adcp/webhooks';
import { secretBoxOf } from '../../shared/crypto/secret-box';

/**
 * The AdCP SDK's own RFC 9421 webhook-signing conformance vectors (shipped with @adcp/sdk:
 * compliance/cache/3.0.6/test-vectors/webhook-signing), run through the receiver the seller-webhook
 * endpoint uses, with its replay store in PostgreSQL: every positive vector is accepted and every
 * negative one refused with the vector's own error code. The vectors sign their own URL
 * (buyer.example.com), which no route of ours answers, so they are given to the receiver with
 * that URL rather than posted; the endpoint's own path is covered by webhooks.test.ts.
 *
 * Vectors that need the receiver in a state are given it for real: the seen nonce (016) is in the
 * replay table, the revoked key (017) and the out-of-date revocation snapshot (019) are served by
 * a revocation endpoint the seller is configured with, the per-key cap (018) is filled, and the
 * key without "verify" (020) is the one the seller's JWKS serves.
 */
const VECTORS = path.join(path.dirname(require.resolve('@adcp/sdk/package.json')), 'compliance/cache/3.0.6/test-vectors/webhook-signing');

interface Vector {
  name: string;
  reference_now: number;
  request: { method: string; url: string; headers: Record<string, string>; body: string };
  expected_outcome: { success: boolean; error_code?: string };
  jwks_override?: Record<string, Record<string, unknown>>;
  test_harness_state?: { replay_cache_entries?: Array<{ keyid: string; nonce: string }>; per_keyid_cap_filled_for?: string };
}

const read = (dir: 'positive' | 'negative') =>
  fs
    .readdirSync(path.join(VECTORS, dir))
    .filter((f) => f.endsWith('.json'))
    .sort()
    .map((f) => [f, JSON.parse(fs.readFileSync(path.join(VECTORS, dir, f), 'utf8')) as Vector] as const);

const { keys } = JSON.parse(fs.readFileSync(path.join(VECTORS, 'keys.json'), 'utf8')) as { keys: Array<Record<string, unknown>> };
const publicKeys = keys.map(({ _private_d_for_test_only: _d, ...k }) => k);
const NOW = read('positive')[0]![1].reference_now;
const iso = (seconds: number) => new Date(seconds * 1000).toISOString().replace('.000Z', 'Z');
const snapshot = (updated: number, nextUpdate: number, revoked: string[]) => ({
  issuer: 'https://seller.example',
  updated: iso(updated),
  next_update: iso(nextUpdate),
  revoked_kids: revoked,
  revoked_jtis: [],
});
const keyOps = read('negative').find(([f]) => f.startsWith('020'))![1].jwks_override!;

/** What the seller publishes: its keys (or the vector's override of one), and its revocation snapshots. */
const published: Record<string, unknown> = {
  '/keys': { keys: publicKeys },
  '/keys-without-verify': { keys: publicKeys.map((k) => keyOps[k.kid as string] ?? k) },
  '/revoked': snapshot(NOW - 60, NOW + 3600, ['test-revoked-webhook-2026']),
  '/stale': snapshot(NOW - 7200, NOW - 3600, []),
};

let env: TestEnv;
let server: http.Server;
let base: string;
const sellers = new Map<string, AdcpSellerConnection>();

beforeAll(async () => {
  env = await createTestEnv();
  server = http.createServer((req, res) => {
    const body = published[req.url ?? ''];
    res.writeHead(body ? 200 : 404, { 'content-type': 'application/json' });
    res.end(JSON.stringify(body ?? {}));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  const seller = (key: string, jwks: string, revocation?: string) =>
    sellers.set(
      key,
      new AdcpSellerConnection(
        {
          key,
          agentUrl: 'https://seller.example/mcp',
          channels: ['ctv'],
          sandbox: false,
          webhookJwksUrl: `${base}${jwks}`,
          ...(revocation ? { webhookRevocationUrl: `${base}${revocation}` } : {}),
        },
        { capabilitiesTtlMs: 60_000 },
      ),
    );
  seller('vectors', '/keys');
  seller('vectors-revoking', '/keys', '/revoked');
  seller('vectors-stale', '/keys', '/stale');
  seller('vectors-key-ops', '/keys-without-verify');
}, 60_000);
afterAll(async () => {
  await Promise.all([...sellers.values()].map((s) => s.close()));
  server?.close();
  await env?.close();
});

/** A receiver as the endpoint builds it, its clock at the vectors' own time. */
const receiver = (more: { replayCapPerKey?: number } = {}) =>
  new AdcpWebhookReceiver(env.db, { allowPrivateJwks: true, secrets: secretBoxOf(env.config()), now: () => NOW, ...more });

/** The seller a vector is delivered as: the one whose published state it needs. */
const sellerFor = (file: string) =>
  sellers.get(
    file.startsWith('017')
      ? 'vectors-revoking'
      : file.startsWith('019')
        ? 'vectors-stale'
        : file.startsWith('020')
          ? 'vectors-key-ops'
          : 'vectors',
  )!;

const requestOf = (v: Vector) => ({
  method: v.request.method,
  url: v.request.url,
  // As express hands them over: lower-case names.
  headers: Object.fromEntries(Object.entries(v.request.headers).map(([k, val]) => [k.toLowerCase(), val])),
  body: v.request.body,
});

// Each vector stands alone: the positive ones share a nonce.
afterEach(() => env.db('adcp_webhook_nonces').delete());

/**
 * The SDK's verifier (6.11) names one refusal differently from the 3.0.6 vectors: a key published
 * for another purpose (adcp_use request-signing, 008) is `webhook_mode_mismatch`, a split it makes
 * on purpose (a key scoped for another mode, not unscoped); it is still refused at step 8.
 */
const SDK_NAMES: Record<string, string> = { '008-wrong-adcp-use.json': 'webhook_mode_mismatch' };

describe('positive vectors', () => {
  test.each(read('positive'))('%s is accepted', async (file, v) => {
    expect(v.expected_outcome.success).toBe(true);
    const verified = await receiver().receive(sellerFor(file), requestOf(v));
    expect(['task-outcome', 'not-ours']).toContain(verified.kind);
  });
});

describe('negative vectors', () => {
  test.each(read('negative'))('%s is refused with its code, and keeps no nonce', async (file, v) => {
    expect(v.expected_outcome.success).toBe(false);
    let options: { replayCapPerKey?: number } = {};
    for (const entry of v.test_harness_state?.replay_cache_entries ?? []) {
      await env.db('adcp_webhook_nonces').insert({
        keyid: entry.keyid,
        scope: 'https://buyer.example.com/adcp/webhook/create_media_buy/agent_123/op_abc',
        nonce: entry.nonce,
        expires_at: new Date((NOW + 300) * 1000),
      });
    }
    if (v.test_harness_state?.per_keyid_cap_filled_for) {
      options = { replayCapPerKey: 2 };
      const scope = new URL(v.request.url).href;
      for (const nonce of ['filled-1', 'filled-2']) {
        await env.db('adcp_webhook_nonces').insert({
          keyid: v.test_harness_state.per_keyid_cap_filled_for,
          scope,
          nonce,
          expires_at: new Date((NOW + 300) * 1000),
        });
      }
    }
    const before = await env.db('adcp_webhook_nonces').count<{ n: string }[]>('* as n');
    const refusal = await receiver(options)
      .receive(sellerFor(file), requestOf(v))
      .then(
        () => null,
        (err: unknown) => err,
      );
    expect(refusal).toBeInstanceOf(WebhookRefused);
    expect(refusal).toMatchObject({ status: 401, code: SDK_NAMES[file] ?? v.expected_outcome.error_code });
    // A refused webhook records no nonce of its own.
    expect(await env.db('adcp_webhook_nonces').count<{ n: string }[]>('* as n')).toEqual(before);
  });
});
