import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Received {
  headers: Record<string, string>;
  body: string;
  at: number;
}

/**
 * A webhook receiver on loopback (port 0). `answer` decides each response's status (200 by
 * default); returning null leaves the request hanging until the sender gives up.
 */
export class WebhookReceiver {
  received: Received[] = [];
  open = 0;
  maxOpen = 0;
  answer: (r: Received, n: number) => number | null = () => 200;
  private server!: http.Server;
  url = '';

  static async start(path = '/hook'): Promise<WebhookReceiver> {
    const r = new WebhookReceiver();
    r.server = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const got: Received = {
          headers: Object.fromEntries(Object.entries(req.headers).map(([k, v]) => [k, String(v)])),
          body: Buffer.concat(chunks).toString('utf8'),
          at: Date.now(),
        };
        r.received.push(got);
        const status = r.answer(got, r.received.length);
        if (status === null) {
          r.open++;
          r.maxOpen = Math.max(r.maxOpen, r.open);
          res.on('close', () => r.open--);
          return;
        }
        res.statusCode = status;
        res.end();
      });
    });
    await new Promise<void>((done) => r.server.listen(0, '127.0.0.1', done));
    r.url = `http://127.0.0.1:${(r.server.address() as AddressInfo).port}${path}`;
    return r;
  }

  events<T = { id: string; type: string; subject: { id: string; version: number }; data: Record<string, unknown> }>(): T[] {
    return this.received.map((r) => JSON.parse(r.body) as T);
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((done) => this.server.close(() => done()));
  }
}
