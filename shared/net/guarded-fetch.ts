import http from 'node:http';
import https from 'node:https';
import { isLoopbackUrl, pinnedLookup, resolvePublicTarget, urlRefusal, UnsafeTarget, type AddressPolicy } from './public-address';

export interface GuardedFetchOptions {
  policy: AddressPolicy;
  /** The whole exchange, redirects and body included. */
  timeoutMs: number;
  /** The largest response body read; a larger one (declared or streamed) is refused. */
  maxBytes: number;
  /** Redirects followed, each target checked like the first; 0 (the default) returns a 3xx as it is. */
  maxRedirects?: number;
  method?: string;
  headers?: Headers | Record<string, string>;
  body?: string | Uint8Array;
  signal?: AbortSignal;
  /**
   * Loopback peers' certificates are not checked (where the policy allows loopback at all): no
   * public authority certifies a loopback name, and the connection never leaves the machine.
   */
  trustLoopbackTls?: boolean;
}

export type FetchRefusalReason = 'address' | 'too_large' | 'timeout' | 'redirects' | 'connection';

/** Why a guarded fetch gave up; its message is fit to show the person who supplied the URL. */
export class FetchRefused extends Error {
  override readonly name = 'FetchRefused';
  constructor(
    readonly reason: FetchRefusalReason,
    message: string,
  ) {
    super(message);
  }
}

const REDIRECTS = new Set([301, 302, 303, 307, 308]);
const NO_BODY = new Set([101, 204, 205, 304]);

interface Answer {
  status: number;
  headers: Headers;
  body: Buffer;
}

function exchange(url: URL, o: GuardedFetchOptions, target: { address: string; family: 4 | 6 }, signal: AbortSignal): Promise<Answer> {
  const headers = Object.fromEntries(new Headers(o.headers));
  const insecure = o.trustLoopbackTls === true && o.policy.allowLoopback && isLoopbackUrl(url);
  return new Promise<Answer>((resolve, reject) => {
    const req = (url.protocol === 'https:' ? https : http).request(
      url,
      {
        method: o.method ?? 'GET',
        headers,
        lookup: pinnedLookup(target),
        agent: false,
        signal,
        ...(url.protocol === 'https:' && insecure ? { rejectUnauthorized: false } : {}),
      },
      (res) => {
        const status = res.statusCode ?? 0;
        const out = new Headers();
        for (const [name, value] of Object.entries(res.headers)) for (const v of [value].flat()) if (v !== undefined) out.append(name, v);
        const declared = Number(res.headers['content-length']);
        if (declared > o.maxBytes) {
          res.destroy();
          reject(new FetchRefused('too_large', `the response is larger than ${o.maxBytes} bytes`));
          return;
        }
        const chunks: Buffer[] = [];
        let size = 0;
        res.on('data', (chunk: Buffer) => {
          size += chunk.length;
          if (size > o.maxBytes) {
            res.destroy();
            reject(new FetchRefused('too_large', `the response is larger than ${o.maxBytes} bytes`));
            return;
          }
          chunks.push(chunk);
        });
        res.on('end', () => resolve({ status, headers: out, body: Buffer.concat(chunks) }));
        res.on('error', (err) => reject(err));
      },
    );
    req.on('error', reject);
    req.end(o.body);
  });
}

/**
 * A fetch that goes only where the address policy allows: every URL (the first and each
 * redirect's) is checked as written and on the addresses its name resolves to, and the
 * connection is pinned to the checked address. The whole exchange has `timeoutMs` and the body
 * at most `maxBytes`. Answers a web Response holding the body read; throws FetchRefused.
 */
export async function guardedFetch(input: string | URL, o: GuardedFetchOptions): Promise<Response> {
  const deadline = AbortSignal.timeout(o.timeoutMs);
  const signal = o.signal ? AbortSignal.any([deadline, o.signal]) : deadline;
  let url = new URL(input);
  let request = o;
  for (let hop = 0; ; hop++) {
    const why = urlRefusal(url, o.policy);
    if (why) throw new FetchRefused('address', `refused: ${why}`);
    let answer: Answer;
    try {
      const target = await resolvePublicTarget(url, o.policy);
      answer = await exchange(url, request, target, signal);
    } catch (err) {
      if (err instanceof FetchRefused) throw err;
      if (err instanceof UnsafeTarget) throw new FetchRefused('address', err.message);
      if (deadline.aborted) throw new FetchRefused('timeout', `no answer within ${o.timeoutMs} ms`);
      if (signal.aborted) throw new FetchRefused('connection', 'the request was cancelled');
      throw new FetchRefused('connection', `connection failed: ${(err as NodeJS.ErrnoException).code ?? 'error'}`);
    }
    const location = answer.headers.get('location');
    if (REDIRECTS.has(answer.status) && location && (o.maxRedirects ?? 0) > 0) {
      if (hop >= o.maxRedirects!) throw new FetchRefused('redirects', `more than ${o.maxRedirects} redirects`);
      url = new URL(location, url);
      // As browsers do: a 303 (and a 301 or 302 to a POST) is followed with a GET and no body.
      if (answer.status === 303 || ((answer.status === 301 || answer.status === 302) && request.method === 'POST'))
        request = { ...request, method: 'GET', body: undefined };
      continue;
    }
    return new Response(NO_BODY.has(answer.status) ? null : answer.body, { status: answer.status, headers: answer.headers });
  }
}
