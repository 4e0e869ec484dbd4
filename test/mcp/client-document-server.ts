import fs from 'node:fs';
import https from 'node:https';
import path from 'node:path';
import type { AddressInfo } from 'node:net';

/**
 * Serves Client ID Metadata Documents over https on 127.0.0.1, as an assistant's own site would.
 * The certificate is a self-signed one for localhost, 127.0.0.1 and ::1, made once with
 * `openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 36500
 * -subj /CN=localhost -addext subjectAltName=DNS:localhost,IP:127.0.0.1,IP:::1`; it guards
 * nothing (the service checks no loopback certificate, and only where loopback documents are
 * allowed at all).
 */
export interface DocumentServer {
  origin: string;
  /** Every path asked for, in order. */
  requests: string[];
  /** What each path answers: a document (JSON), or a raw body with headers. */
  serve(p: string, body: unknown, headers?: Record<string, string>): string;
  close(): Promise<void>;
}

export async function startDocumentServer(): Promise<DocumentServer> {
  const dir = path.join(__dirname, 'fixtures');
  const routes = new Map<string, { body: string; headers: Record<string, string> }>();
  const requests: string[] = [];
  const server = https.createServer(
    { key: fs.readFileSync(path.join(dir, 'loopback-tls-key.pem')), cert: fs.readFileSync(path.join(dir, 'loopback-tls-cert.pem')) },
    (req, res) => {
      requests.push(req.url ?? '');
      const route = routes.get(req.url ?? '');
      if (!route) {
        res.writeHead(404).end();
        return;
      }
      res.writeHead(200, { 'content-type': 'application/json', ...route.headers }).end(route.body);
    },
  );
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const origin = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    origin,
    requests,
    serve(p, body, headers = {}) {
      routes.set(p, { body: typeof body === 'string' ? body : JSON.stringify(body), headers });
      return `${origin}${p}`;
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
