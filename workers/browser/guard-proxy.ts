import http from 'node:http';
import net from 'node:net';
import type { Duplex } from 'node:stream';
import {
  addressRefusal,
  isAddressLiteral,
  pinnedLookup,
  resolvePublic,
  UnsafeTarget,
  type AddressPolicy,
  type Target,
} from '../../shared/net/public-address';
import type { BrowserJobOrigins } from '../../shared/bookings/browser-job-policy';
import type { RefusedRequest } from '../../shared/bookings/browser-job-schemas';

/**
 * The browser's only way out: Chromium is started with this forward proxy and nothing bypasses it
 * (loopback included). Every connection the page makes (each request over http, each tunnel for
 * https, each redirect's new target) is checked here, where the page cannot interfere: the host
 * must be one the job may reach, and every address it resolves to must pass the public-address
 * rules; the connection then goes to the address that was checked. Plain requests other than GET
 * and HEAD and protocol upgrades are refused too. Bytes coming in are counted against the job's
 * limit. A refused connection is closed without an answer, so the browser sees a network error
 * rather than a page of ours standing in for the supplier's.
 */
export interface GuardProxy {
  /** `http://127.0.0.1:<port>`, for Chromium's --proxy-server. */
  url: string;
  /** Bytes received from the supplier's side so far. */
  bytes(): number;
  /** Set once the byte limit was passed: every connection was cut. */
  overLimit(): boolean;
  refused: ProxyRefusal[];
  close(): Promise<void>;
}

/**
 * A refusal, and whether a page sent it: a plain request with a Referer or Origin (Chromium's own
 * background requests, such as extension update checks, carry neither). A tunnel cannot say.
 */
export interface ProxyRefusal extends RefusedRequest {
  fromPage: boolean | null;
}

const HOP_BY_HOP = ['proxy-connection', 'proxy-authorization', 'connection', 'keep-alive', 'upgrade', 'te', 'trailer', 'transfer-encoding'];
const MAX_REFUSED = 200;

export async function startGuardProxy(o: { origins: BrowserJobOrigins; policy: AddressPolicy; maxBytes: number }): Promise<GuardProxy> {
  const refused: ProxyRefusal[] = [];
  const sockets = new Set<Duplex>();
  let received = 0;
  let over = false;
  const note = (method: string, url: string, reason: string, req?: http.IncomingMessage) => {
    const fromPage = req ? Boolean(req.headers.referer || req.headers.origin) : null;
    if (refused.length < MAX_REFUSED) refused.push({ method, url: url.slice(0, 500), reason, fromPage });
  };
  const track = (s: Duplex) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
    s.on('error', () => undefined);
  };
  /** Counts incoming bytes; past the limit, every connection is cut. */
  const count = (n: number) => {
    received += n;
    if (received > o.maxBytes && !over) {
      over = true;
      for (const s of sockets) s.destroy();
    }
  };

  /** The checks, in order: an address literal against the address rules, the host against the job's origins, then DNS. */
  async function admit(host: string, port: number, protocol: 'http:' | 'https:'): Promise<Target> {
    const bare = host.replace(/^\[|\]$/g, '').toLowerCase();
    if (isAddressLiteral(bare)) {
      const why = addressRefusal(bare, o.policy);
      if (why) throw new UnsafeTarget(why);
    }
    const why = o.origins.refusal(bare, port, protocol);
    if (why) throw new UnsafeTarget(why);
    return resolvePublic(bare, o.policy);
  }

  const server = http.createServer();
  server.on('connection', track);

  // https (and wss): a tunnel to the checked address; what goes through it is TLS the proxy cannot read.
  server.on('connect', (req: http.IncomingMessage, client: Duplex, head: Buffer) => {
    track(client);
    const target = `https://${req.url ?? ''}/`;
    let url: URL;
    try {
      url = new URL(target);
    } catch {
      client.end('HTTP/1.1 400 Bad Request\r\nConnection: close\r\n\r\n');
      return;
    }
    const port = Number(url.port || 443);
    admit(url.hostname, port, 'https:').then(
      (to) => {
        if (over) return void client.destroy();
        const upstream = net.connect({ host: to.address, port, family: to.family });
        track(upstream);
        upstream.on('connect', () => {
          client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
          if (head.length) upstream.write(head);
          upstream.on('data', (chunk: Buffer) => count(chunk.length));
          upstream.pipe(client);
          client.pipe(upstream);
        });
        upstream.on('error', () => client.destroy());
        client.on('close', () => upstream.destroy());
      },
      (err: unknown) => {
        note('CONNECT', target, reasonOf(err));
        client.end('HTTP/1.1 403 Forbidden\r\nContent-Length: 0\r\nConnection: close\r\n\r\n');
      },
    );
  });

  // A WebSocket (or any upgrade) over plain http: it could carry anything both ways.
  server.on('upgrade', (req: http.IncomingMessage, client: Duplex) => {
    track(client);
    note(req.method ?? 'GET', req.url ?? '', 'a browser job opens no WebSocket or upgraded connection', req);
    client.destroy();
  });

  // Plain http: the request is forwarded to the checked address, GET and HEAD only.
  server.on('request', (req: http.IncomingMessage, res: http.ServerResponse) => {
    const method = req.method ?? 'GET';
    let url: URL;
    try {
      url = new URL(req.url ?? '');
      if (url.protocol !== 'http:') throw new Error('not a proxy request');
    } catch {
      res.writeHead(400, { connection: 'close' }).end();
      return;
    }
    if (method !== 'GET' && method !== 'HEAD') {
      note(method, url.href, 'only GET and HEAD: a browser job changes nothing', req);
      req.socket.destroy();
      return;
    }
    admit(url.hostname, Number(url.port || 80), 'http:').then(
      (to) => {
        if (over) return void req.socket.destroy();
        const headers = { ...req.headers };
        for (const h of HOP_BY_HOP) delete headers[h];
        const upstream = http.request(url, { method, headers, lookup: pinnedLookup(to), agent: false }, (answer) => {
          res.writeHead(answer.statusCode ?? 502, answer.statusMessage, stripHopByHop(answer.headers));
          answer.on('data', (chunk: Buffer) => count(chunk.length));
          answer.pipe(res);
          answer.on('error', () => res.destroy());
        });
        upstream.on('socket', track);
        upstream.on('error', () => (res.headersSent ? res.destroy() : req.socket.destroy()));
        upstream.end();
      },
      (err: unknown) => {
        note(method, url.href, reasonOf(err), req);
        req.socket.destroy();
      },
    );
  });

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    bytes: () => received,
    overLimit: () => over,
    refused,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}

function stripHopByHop(headers: http.IncomingHttpHeaders): http.OutgoingHttpHeaders {
  const out: http.OutgoingHttpHeaders = { ...headers };
  for (const h of HOP_BY_HOP) delete out[h];
  return out;
}

const reasonOf = (err: unknown) => (err instanceof UnsafeTarget ? err.message : 'the connection could not be checked');
