import http from 'node:http';

/**
 * A raw HTTP client for hostile requests: any method with any body, paths sent byte for byte
 * (fetch would normalise them and refuses a body on GET), bodies as raw bytes.
 */
export interface RawRequest {
  method: string;
  /** Sent as is: already encoded, or deliberately not. */
  path: string;
  headers?: Record<string, string>;
  body?: Buffer | string;
}

export interface RawResponse {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: string;
  /** Set when no response arrived (the connection failed). */
  error?: string;
}

export class RawClient {
  private readonly agent: http.Agent;
  private readonly base: URL;

  constructor(baseUrl: string, maxSockets = 8) {
    this.base = new URL(baseUrl);
    this.agent = new http.Agent({ keepAlive: true, maxSockets });
  }

  send(req: RawRequest): Promise<RawResponse> {
    return new Promise((resolve) => {
      const body = req.body === undefined ? undefined : Buffer.isBuffer(req.body) ? req.body : Buffer.from(req.body, 'utf8');
      const headers: Record<string, string> = { ...(req.headers ?? {}) };
      if (body) headers['content-length'] = String(body.length);
      const r = http.request(
        { host: this.base.hostname, port: this.base.port, method: req.method, path: req.path, headers, agent: this.agent },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString('utf8') }));
          res.on('error', (err) => resolve({ status: 0, headers: {}, body: '', error: err.message }));
        },
      );
      // The server may answer (413) before it has read a huge body; the answer is what counts.
      r.on('error', (err) => resolve({ status: 0, headers: {}, body: '', error: err.message }));
      r.end(body);
    });
  }

  close(): void {
    this.agent.destroy();
  }
}

/** Runs the tasks with at most `width` in flight, keeping their order in the results. */
export async function inPool<T, R>(items: T[], width: number, run: (item: T, index: number) => Promise<R>): Promise<R[]> {
  const results: R[] = new Array(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const i = next++;
      results[i] = await run(items[i]!, i);
    }
  };
  await Promise.all(Array.from({ length: Math.min(width, items.length) }, worker));
  return results;
}

export const isProblemJson = (res: RawResponse) => {
  if (!String(res.headers['content-type'] ?? '').startsWith('application/problem+json')) return false;
  try {
    const body = JSON.parse(res.body) as { status?: unknown; code?: unknown; title?: unknown };
    return body.status === res.status && typeof body.code === 'string' && typeof body.title === 'string';
  } catch {
    return false;
  }
};
