import http from 'node:http';

/** What a seller answered to each request a lossy proxy watched for, and whether the buyer got it. */
export type Seen = Array<{ request: string; answer: string; delivered: boolean }>;

/**
 * Between Flightdeck and a seller: passes everything on, but the seller's answer to the first
 * `lose` requests whose body contains `watched` (e.g. `"create_media_buy"`) never reaches
 * Flightdeck: the connection is cut after the seller acted. Every such request is recorded in
 * `seen`. Returns the proxy's agent URL and the server (`lossyProxies` keeps and closes them).
 */
export async function lossyProxy(
  target: string,
  seen: Seen,
  lose: number,
  watched = '"create_media_buy"',
): Promise<{ url: string; server: http.Server }> {
  const server = http.createServer((req, res) => {
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
        if (body.toString().includes(watched)) {
          const delivered = seen.length >= lose;
          seen.push({ request: body.toString(), answer: answer.toString(), delivered });
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
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { url: `http://127.0.0.1:${(server.address() as { port: number }).port}/mcp`, server };
}

/** A test file's lossy proxies: each made with `to` (its agent URL answered), all closed together. */
export function lossyProxies() {
  const servers: http.Server[] = [];
  return {
    async to(target: string, seen: Seen, lose: number, watched?: string): Promise<string> {
      const { url, server } = await lossyProxy(target, seen, lose, watched);
      servers.push(server);
      return url;
    },
    /** Closes them, cutting their open connections. */
    close(): void {
      for (const server of servers) {
        server.closeAllConnections();
        server.close();
      }
    },
  };
}
