import http from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import { measure, printPair } from './support';
import type { BenchService } from './service';

/** A bare express app with the same response shapes: the floor our middleware stack is measured against. */
async function startBareExpress(): Promise<{ url: string; close(): Promise<void> }> {
  const app = express();
  app.get('/context', (_req, res) => {
    res.json({ user: { id: 'bench-user' }, advertiser: { id: 'bench-org' } });
  });
  app.post('/t', express.json(), (_req, res) => {
    res.status(202).json({ accepted: true, replayed: false });
  });
  const server = http.createServer(app);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}

export async function benchHttp(service: BenchService): Promise<void> {
  const bare = await startBareExpress();
  try {
    console.log('HTTP (autocannon)');
    const ctxService = await measure('GET /api/v1/auth/context', `${service.url}/api/v1/auth/context`, {
      headers: { authorization: `Bearer ${service.token}` },
    });
    const ctxBare = await measure('bare express GET', `${bare.url}/context`);
    printPair(ctxService, ctxBare);

    const body = JSON.stringify({ kind: 'pageview', event: 'view', valueMinor: 100 });
    const headers = { 'content-type': 'application/json' };
    const pixelService = await measure('POST /api/v1/t/{pixelKey}', `${service.url}/api/v1/t/${service.pixelKey}`, {
      method: 'POST',
      headers,
      body,
    });
    const pixelBare = await measure('bare express POST (json)', `${bare.url}/t`, { method: 'POST', headers, body });
    printPair(pixelService, pixelBare);
  } finally {
    await bare.close();
  }
}
