import http from 'node:http';
import type { AddressInfo } from 'node:net';

/** One request a test supplier site received. */
export interface Received {
  method: string;
  path: string;
  at: number;
}

type Handler = (req: http.IncomingMessage, res: http.ServerResponse, site: SupplierSite) => void;

export interface SupplierSite {
  /** `http://127.0.0.1:<port>` */
  origin: string;
  port: number;
  /** Every request the site received, in order. */
  received: Received[];
  close(): Promise<void>;
}

/**
 * A supplier's site served by the test on loopback, recording every request it receives (the
 * browser worker may reach it only under the test-only loopback allowance). Pages are given by
 * path; a path not given is a 404.
 */
export async function startSupplierSite(pages: Record<string, Handler>): Promise<SupplierSite> {
  const received: Received[] = [];
  const open = new Set<import('node:net').Socket>();
  const site = {} as SupplierSite;
  const server = http.createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://site');
    received.push({ method: req.method ?? '', path: `${url.pathname}${url.search}`, at: Date.now() });
    req.resume();
    const page = pages[url.pathname];
    if (page) page(req, res, site);
    else res.writeHead(404, { 'content-type': 'text/plain' }).end('not here');
  });
  server.on('connection', (s) => {
    open.add(s);
    s.on('close', () => open.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  Object.assign(site, {
    origin: `http://127.0.0.1:${port}`,
    port,
    received,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of open) s.destroy();
        server.close(() => resolve());
      }),
  });
  return site;
}

/** An HTML page. */
export const html =
  (body: string, status = 200): Handler =>
  (_req, res) =>
    void res.writeHead(status, { 'content-type': 'text/html; charset=utf-8' }).end(body);

/** A redirect to `location`. */
export const redirect =
  (location: string): Handler =>
  (_req, res) =>
    void res.writeHead(302, { location }).end();
