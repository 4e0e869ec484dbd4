import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { FetchRefused, guardedFetch } from '../../shared/net/guarded-fetch';
import { urlRefusal } from '../../shared/net/public-address';

/** A loopback server whose answer per path the test decides; it counts what it was asked. */
let server: http.Server;
let origin: string;
const asked: string[] = [];
const routes = new Map<string, (res: http.ServerResponse) => void>();

beforeAll(async () => {
  server = http.createServer((req, res) => {
    asked.push(req.url ?? '');
    const route = routes.get(req.url ?? '');
    if (route) route(res);
    else res.writeHead(404).end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

const loopback = { allowLoopback: true };
const refusal = (p: Promise<unknown>) =>
  p.then(
    () => null,
    (err: unknown) =>
      err instanceof FetchRefused ? { reason: err.reason, message: err.message } : { reason: 'other', message: String(err) },
  );

describe('the public-address guard', () => {
  test('URLs are judged as written: scheme, credentials, literal private, loopback, link-local and unspecified addresses', () => {
    const strict = { allowLoopback: false };
    expect(urlRefusal(new URL('https://example.com/x'), strict)).toBeNull();
    expect(urlRefusal(new URL('http://example.com/x'), strict)).toMatch(/http/);
    expect(urlRefusal(new URL('ftp://example.com/x'), strict)).toBe('only https');
    expect(urlRefusal(new URL('https://u:p@example.com/x'), strict)).toBe('credentials in the URL');
    for (const [url, range] of [
      ['https://10.1.2.3/', 'private'],
      ['https://192.168.0.1/', 'private'],
      ['https://169.254.169.254/', 'linkLocal'],
      ['https://127.0.0.1/', 'loopback'],
      ['https://[::1]/', 'loopback'],
      ['https://[::ffff:10.0.0.1]/', 'private'],
      ['https://0.0.0.0/', 'unspecified'],
    ] as const)
      expect(urlRefusal(new URL(url), strict)).toBe(`the address is ${range}`);
    expect(urlRefusal(new URL('https://localhost/'), strict)).toBe('the address is loopback');
    // Development allowance: this machine only, http included.
    expect(urlRefusal(new URL('http://127.0.0.1:9/'), loopback)).toBeNull();
    expect(urlRefusal(new URL('http://10.0.0.1/'), loopback)).toMatch(/http/);
  });
});

describe('a guarded fetch', () => {
  test('answers the body of a page the policy allows, with its status and headers', async () => {
    routes.set('/doc', (res) =>
      res.writeHead(200, { 'content-type': 'application/json', 'cache-control': 'max-age=60' }).end('{"ok":true}'),
    );
    const res = await guardedFetch(`${origin}/doc`, { policy: loopback, timeoutMs: 2000, maxBytes: 1024 });
    expect(res.status).toBe(200);
    expect(res.headers.get('cache-control')).toBe('max-age=60');
    expect(await res.json()).toEqual({ ok: true });
  });

  test('a loopback page is refused, unasked, when the policy does not allow this machine', async () => {
    const before = asked.length;
    expect(
      await refusal(guardedFetch(`${origin}/doc`, { policy: { allowLoopback: false }, timeoutMs: 2000, maxBytes: 1024 })),
    ).toMatchObject({
      reason: 'address',
    });
    expect(asked.length).toBe(before);
  });

  test('redirects are returned as they are unless followed; followed ones are checked again, hop by hop', async () => {
    routes.set('/hop', (res) => res.writeHead(302, { location: '/doc' }).end());
    routes.set('/to-private', (res) => res.writeHead(307, { location: 'https://10.9.8.7/secret' }).end());
    routes.set('/loop', (res) => res.writeHead(302, { location: '/loop' }).end());
    const unfollowed = await guardedFetch(`${origin}/hop`, { policy: loopback, timeoutMs: 2000, maxBytes: 1024 });
    expect([unfollowed.status, unfollowed.headers.get('location')]).toEqual([302, '/doc']);
    const followed = await guardedFetch(`${origin}/hop`, { policy: loopback, timeoutMs: 2000, maxBytes: 1024, maxRedirects: 3 });
    expect(await followed.json()).toEqual({ ok: true });
    expect(
      await refusal(guardedFetch(`${origin}/to-private`, { policy: loopback, timeoutMs: 2000, maxBytes: 1024, maxRedirects: 3 })),
    ).toEqual({
      reason: 'address',
      message: 'refused: the address is private',
    });
    expect(
      await refusal(guardedFetch(`${origin}/loop`, { policy: loopback, timeoutMs: 2000, maxBytes: 1024, maxRedirects: 3 })),
    ).toMatchObject({
      reason: 'redirects',
    });
  });

  test('a body over the limit is refused, whether its length was declared or only streamed', async () => {
    routes.set('/declared', (res) => res.writeHead(200, { 'content-length': '5000' }).end('x'.repeat(5000)));
    routes.set('/streamed', (res) => {
      res.writeHead(200);
      for (let i = 0; i < 10; i++) res.write('y'.repeat(600));
      res.end();
    });
    for (const p of ['/declared', '/streamed'])
      expect(await refusal(guardedFetch(`${origin}${p}`, { policy: loopback, timeoutMs: 2000, maxBytes: 4096 }))).toMatchObject({
        reason: 'too_large',
      });
  });

  test('a server that does not finish in time is given up on', async () => {
    routes.set('/slow', (res) => {
      res.writeHead(200);
      res.write('{');
    });
    expect(await refusal(guardedFetch(`${origin}/slow`, { policy: loopback, timeoutMs: 300, maxBytes: 1024 }))).toMatchObject({
      reason: 'timeout',
    });
  });
});
