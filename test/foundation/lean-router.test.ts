import http from 'node:http';
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import { apiParts, buildApp, leanRoutes } from '../../api/app';
import type { ApiDeps } from '../../api/deps';
import { leanRouter, readJson } from '../../api/http/lean-router';
import { defineRoute, type RouteDef } from '../../api/http/route';
import { rateLimitRules } from '../../api/middleware/rate-limit';
import { createTestEnv, json, type TestApi, type TestEnv } from '../support/api';
import { launchPlan, sevenSandboxLines } from '../support/bookings';
import { until } from '../support/wait';

// The lean router answers the hot routes without express. These tests hold it to express's own
// answers: a server of the lean router alone (anything it declines is a 599) against a server
// of express alone, for the same requests.

let env: TestEnv;
let api: TestApi;
let lean: http.Server;
let express: http.Server;
let token: string;
let pixelKey: string;
let bookingId: string;
let campaignId: string;

const DECLINED = 599;

function listen(server: http.Server): Promise<http.Server> {
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}

/** The lean router of these deps alone: whatever it does not take is answered 599. */
function leanOnly(deps: ApiDeps): http.Server {
  const parts = apiParts(deps);
  const router = leanRoutes(deps, parts, buildApp(deps, parts));
  return http.createServer((req, res) => {
    if (router(req, res)) return;
    res.statusCode = DECLINED;
    res.end();
  });
}

interface Answer {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: string;
}

interface Call {
  method?: string;
  path: string;
  headers?: Record<string, string>;
  body?: string | Buffer;
}

/** A request with full control of method, headers and body (fetch would fix some of them). */
function send(server: http.Server, call: Call): Promise<Answer> {
  const { port } = server.address() as AddressInfo;
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        host: '127.0.0.1',
        port,
        method: call.method ?? 'GET',
        path: call.path,
        headers: {
          'x-request-id': 'lean-router-test',
          // Node sends a GET's body with neither length nor chunks unless told its length.
          ...(call.body !== undefined && !call.headers?.['transfer-encoding']
            ? { 'content-length': String(Buffer.byteLength(call.body)) }
            : {}),
          ...call.headers,
        },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body: Buffer.concat(chunks).toString('utf8') }));
      },
    );
    req.on('error', reject);
    req.end(call.body);
  });
}

// What a client sees of an answer; the remaining count moves with every request, and is compared on its own.
const COMPARED = [
  'content-type',
  'content-length',
  'etag',
  'x-request-id',
  'x-ratelimit-limit',
  'retry-after',
  'www-authenticate',
  'access-control-allow-origin',
];
const seen = (a: Answer) => ({
  status: a.status,
  body: a.body,
  headers: Object.fromEntries(COMPARED.map((h) => [h, a.headers[h]])),
});

/** Sends the call to both servers: the lean router must take it and answer exactly as express does. */
async function sameAsExpress(call: Call): Promise<Answer> {
  const viaLean = await send(lean, call);
  const viaExpress = await send(express, call);
  expect(viaLean.status).not.toBe(DECLINED);
  expect(seen(viaLean)).toEqual(seen(viaExpress));
  return viaLean;
}

beforeAll(async () => {
  env = await createTestEnv();
  api = await env.api();
  lean = await listen(leanOnly(api.deps));
  express = await listen(http.createServer(buildApp(api.deps)));
  const launched = await launchPlan(env, api, sevenSandboxLines(), 'org-lean');
  token = launched.token;
  bookingId = launched.booking.id;
  campaignId = launched.campaignId;
  const ctx = await json<{ workspace: { pixelKey: string } }>(await api.fetch('/api/v1/auth/context', { token }));
  pixelKey = ctx.workspace.pixelKey;
  // The pixel writer stores what either server accepted.
  await env.workers({ WORKER_QUEUES: 'pixel' });
});
afterAll(async () => {
  await Promise.all([lean, express].map((s) => new Promise((r) => s.close(r))));
  await env.close();
});

const bearer = (t: string) => ({ authorization: `Bearer ${t}` });
const pageview = (body: string | Buffer | undefined, headers: Record<string, string> = {}, key = pixelKey): Call => ({
  method: 'POST',
  path: `/api/v1/t/${key}`,
  headers: { ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
  ...(body === undefined ? {} : { body }),
});

describe('the lean router answers as express does', () => {
  test('the auth context, and every way of not being authenticated', async () => {
    const ok = await sameAsExpress({ path: '/api/v1/auth/context', headers: bearer(token) });
    expect(ok.status).toBe(200);
    expect(ok.headers.etag).toMatch(/^W\//);
    expect((await sameAsExpress({ path: '/api/v1/auth/context' })).status).toBe(401);
    expect((await sameAsExpress({ path: '/api/v1/auth/context', headers: { authorization: 'Basic abc' } })).status).toBe(401);
    expect((await sameAsExpress({ path: '/api/v1/auth/context', headers: bearer('a.b.c') })).status).toBe(401);
  });

  test('a booking: its own advertiser reads it; another advertiser, an unknown id and a malformed one find nothing', async () => {
    const ok = await sameAsExpress({ path: `/api/v1/bookings/${bookingId}`, headers: bearer(token) });
    expect(ok.status).toBe(200);
    expect((JSON.parse(ok.body) as { booking: { id: string } }).booking.id).toBe(bookingId);
    const stranger = await env.issuer.token({ org: 'org-lean-stranger' });
    expect((await sameAsExpress({ path: `/api/v1/bookings/${bookingId}`, headers: bearer(stranger) })).status).toBe(404);
    expect((await sameAsExpress({ path: `/api/v1/bookings/${randomUUID()}`, headers: bearer(token) })).status).toBe(404);
    expect((await sameAsExpress({ path: '/api/v1/bookings/not-a-uuid', headers: bearer(token) })).status).toBe(404);
  });

  test('a campaign and its bookings: its own advertiser reads them; another does not find them', async () => {
    const campaign = await sameAsExpress({ path: `/api/v1/campaigns/${campaignId}`, headers: bearer(token) });
    expect([campaign.status, (JSON.parse(campaign.body) as { campaign: { id: string } }).campaign.id]).toEqual([200, campaignId]);
    const bookings = await sameAsExpress({ path: `/api/v1/campaigns/${campaignId}/bookings`, headers: bearer(token) });
    expect((JSON.parse(bookings.body) as { bookings: Array<{ id: string }> }).bookings.map((b) => b.id)).toEqual([bookingId]);
    const stranger = await env.issuer.token({ org: 'org-lean-stranger' });
    for (const path of [`/api/v1/campaigns/${campaignId}`, `/api/v1/campaigns/${campaignId}/bookings`]) {
      expect((await sameAsExpress({ path, headers: bearer(stranger) })).status).toBe(404);
    }
  });

  test('the lean routes are the ones compared here', () => {
    // A route newly marked lean belongs in the tests above first.
    expect(
      apiParts(api.deps)
        .routes.filter((r) => r.lean)
        .map((r) => r.operationId)
        .sort(),
    ).toEqual(['getAuthContext', 'getBooking', 'getCampaign', 'listCampaignBookings', 'trackPageview']);
  });

  test('pageviews: accepted, and refused for the same reasons with the same problems', async () => {
    const before = Number((await env.db('pixel_events').count({ n: '*' }))[0]!.n);
    const accepted = [
      pageview(JSON.stringify({ kind: 'pageview', event: 'view', valueMinor: 100 })),
      pageview(undefined),
      pageview(''),
      pageview(JSON.stringify({ event: 'beacon' }), { 'content-type': 'text/plain;charset=UTF-8' }),
      pageview(Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('{"event":"bom"}')])),
      pageview(JSON.stringify({ event: 'unknown fields are dropped', extra: { a: 1 } })),
      pageview(Buffer.from([0xef, 0xbb, 0xbf])),
      { method: 'POST', path: `/api/v1/t/${pixelKey}`, headers: { 'content-length': '0' } },
    ];
    for (const call of accepted) expect((await sameAsExpress(call)).status).toBe(202);

    const refused: Array<[Call, number, string]> = [
      [pageview('{"kind":'), 400, 'malformed_json'],
      [pageview('[1]'), 400, 'validation_failed'],
      [pageview('"text"'), 400, 'validation_failed'],
      [pageview(`${'['.repeat(65)}${']'.repeat(65)}`), 400, 'body_too_deep'],
      [pageview(JSON.stringify({ valueMinor: -1 })), 400, 'validation_failed'],
      [pageview(JSON.stringify({ kind: 'a\u0000b' })), 400, 'invalid_text'],
      [pageview(JSON.stringify({}), { 'idempotency-key': 'short' }), 400, 'validation_failed'],
      [pageview(JSON.stringify({}), {}, 'no-such-pixel-key'), 404, 'not_found'],
      [pageview(JSON.stringify({}), {}, 'k'.repeat(129)), 400, 'validation_failed'],
    ];
    for (const [call, status, code] of refused) {
      const answer = await sameAsExpress(call);
      expect([answer.status, (JSON.parse(answer.body) as { code: string }).code]).toEqual([status, code]);
      expect(answer.headers['content-type']).toBe('application/problem+json; charset=utf-8');
    }
    // Every accepted pageview was stored twice (once through each server), and no refused one at all.
    await expectStored(before + accepted.length * 2);
  });

  test('an Idempotency-Key keeps the first pageview on either path', async () => {
    for (const server of [lean, express]) {
      const call = pageview(JSON.stringify({ event: 'once' }), { 'idempotency-key': randomUUID() });
      const answers = [await send(server, call), await send(server, call)];
      expect(answers.map((a) => JSON.parse(a.body) as unknown)).toEqual([
        { accepted: true, replayed: false },
        { accepted: true, replayed: true },
      ]);
    }
  });

  test('a lean request is logged once, as express logs it, without its token', async () => {
    const requestId = `lean-log-${randomUUID()}`;
    await send(lean, { path: '/api/v1/auth/context', headers: { ...bearer(token), 'x-request-id': requestId } });
    const logged = () => api.logs.filter((l) => l.requestId === requestId);
    // The line is written when the response closes, a moment after the client has it.
    await until('the request logged', async () => logged().length > 0);
    const lines = logged();
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({
      route: 'GET /api/v1/auth/context',
      req: { id: requestId, method: 'GET', path: '/api/v1/auth/context' },
      res: { statusCode: 200 },
    });
    expect(JSON.stringify(lines)).not.toContain(token);
  });

  test('both charge the one bucket of the client', async () => {
    const remaining: number[] = [];
    for (const server of [lean, express, lean, express]) {
      const answer = await send(server, { path: '/api/v1/auth/context', headers: bearer(token) });
      remaining.push(Number(answer.headers['x-ratelimit-remaining']));
    }
    expect(remaining.slice(1).map((r, i) => remaining[i]! - r)).toEqual([1, 1, 1]);
  });
});

async function expectStored(n: number): Promise<void> {
  const stored = async () => Number((await env.db('pixel_events').count({ n: '*' }))[0]!.n);
  await until(`${n} pageviews stored`, async () => (await stored()) >= n);
  // And no more: a refused pageview must never be stored.
  await new Promise((r) => setTimeout(r, 300));
  expect(await stored()).toBe(n);
}

describe('what the lean router leaves to express', () => {
  const declined: Array<[string, () => Call]> = [
    ['a query string', () => ({ path: '/api/v1/auth/context?x=1', headers: bearer(token) })],
    ['HEAD', () => ({ method: 'HEAD', path: '/api/v1/auth/context', headers: bearer(token) })],
    ['a conditional GET', () => ({ path: '/api/v1/auth/context', headers: { ...bearer(token), 'if-none-match': 'W/"x"' } })],
    ['a percent-encoded path', () => ({ path: `/api/v1/bookings/%61${bookingId.slice(1)}`, headers: bearer(token) })],
    [
      'a body on a read',
      () => ({ path: '/api/v1/auth/context', headers: { ...bearer(token), 'content-type': 'application/json' }, body: '{}' }),
    ],
    ['a route that is not lean', () => ({ path: '/api/v1/campaigns', headers: bearer(token) })],
    ['a form body', () => pageview('a=1', { 'content-type': 'application/x-www-form-urlencoded' })],
    ['another charset', () => pageview('{}', { 'content-type': 'application/json; charset=latin1' })],
    ['an encoded body', () => pageview('{}', { 'content-encoding': 'gzip' })],
    ['a chunked body', () => pageview('{}', { 'transfer-encoding': 'chunked' })],
    ['a body over the limit', () => pageview(JSON.stringify({ event: 'x', pad: 'p'.repeat(17 * 1024) }))],
    // Express's body parser still looks at the type, charset and encoding of a body stated empty.
    [
      'an empty body of no type, its length written 00',
      () => ({ method: 'POST', path: `/api/v1/t/${pixelKey}`, headers: { 'content-length': '00' } }),
    ],
    ['an empty body in another charset', () => pageview('', { 'content-type': 'application/json; charset=latin1' })],
    ['an empty encoded body', () => pageview('', { 'content-encoding': 'gzip' })],
    ['a trailing slash', () => ({ path: '/api/v1/auth/context/', headers: bearer(token) })],
  ];
  test.each(declined)('%s', async (_name, call) => {
    expect((await send(lean, call())).status).toBe(DECLINED);
    // Express answers it in full (not with a 599 or a crash).
    expect((await send(express, call())).status).toBeLessThan(500);
  });

  test('a request express would give to an earlier route', async () => {
    const route = (path: string, operationId: string, isLean: boolean): RouteDef =>
      defineRoute({
        method: 'get',
        path,
        operationId,
        summary: operationId,
        tags: ['test'],
        access: 'public',
        params: z.object({ id: z.string() }).partial(),
        ...(isLean ? { lean: true as const } : {}),
        responses: { 200: { description: 'ok' } },
        async handler() {
          return { status: 200, body: { operationId } };
        },
      });
    const parts = apiParts(api.deps);
    const app = buildApp(api.deps, parts);
    const router = leanRouter([route('/x/special', 'special', false), route('/x/:id', 'byId', true)], parts.runtime, {
      limiter: parts.limiter,
      rules: rateLimitRules(api.deps.config),
      staff: api.deps.staff,
      logger: api.deps.logger,
      trust: app.get('trust proxy fn') as never,
      etag: app.get('etag fn') as never,
    });
    const server = await listen(
      http.createServer((req, res) => {
        if (router(req, res)) return;
        res.statusCode = DECLINED;
        res.end();
      }),
    );
    try {
      expect((await send(server, { path: '/x/special' })).status).toBe(DECLINED);
      const byId = await send(server, { path: '/x/other' });
      expect([byId.status, JSON.parse(byId.body)]).toEqual([200, { operationId: 'byId' }]);
    } finally {
      await new Promise((r) => server.close(r));
    }
  });
});

describe('reading a body', () => {
  test('a client gone before its body was read leaves no read waiting', async () => {
    // The request is read only after its socket closed, as when the rate limit's answer comes late.
    const outcome = new Promise<unknown>((resolve) => {
      const server = http.createServer((req) => {
        req.socket.once('close', () =>
          setTimeout(() => {
            void readJson(req).then(resolve, resolve);
            server.close();
          }, 20),
        );
      });
      server.listen(0, '127.0.0.1', () => {
        const { port } = server.address() as AddressInfo;
        const socket = net.connect(port, '127.0.0.1', () => {
          socket.write('POST /x HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 10\r\n\r\n{"a"');
          setTimeout(() => socket.destroy(), 50);
        });
      });
    });
    const settled = await Promise.race([outcome, new Promise((r) => setTimeout(() => r('still waiting'), 2000))]);
    expect(settled).toMatchObject({ status: 400, code: 'incomplete_body' });
  });
});

describe('the rate limit on the lean path', () => {
  test('the limit reached is the same 429, and nothing is accepted', async () => {
    // A fresh window: the tests above charged this client's bucket under the relaxed limit.
    for (const key of await env.redis.keys(`${env.prefix}:{edge}:rl:*`)) await env.redis.del(key);
    const strict = await env.api({ RATE_LIMIT_MAX: '2' });
    const server = await listen(leanOnly(strict.deps));
    try {
      const call = pageview(JSON.stringify({ event: 'limited' }));
      const before = Number((await env.db('pixel_events').count({ n: '*' }))[0]!.n);
      const answers = [await send(server, call), await send(server, call), await send(server, call)];
      expect(answers.map((a) => a.status)).toEqual([202, 202, 429]);
      const limited = answers[2]!;
      expect(JSON.parse(limited.body)).toMatchObject({ status: 429, code: 'rate_limited', requestId: 'lean-router-test' });
      expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0);
      expect(limited.headers['x-ratelimit-remaining']).toBe('0');
      await expectStored(before + 2);
    } finally {
      await new Promise((r) => server.close(r));
    }
  });
});
