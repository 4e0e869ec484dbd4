import type { RequestListener } from 'node:http';
import { inject, type InjectOptions } from 'light-my-request';

/**
 * A fetch that hands each request to a Node request handler in this process (the embedded
 * authorization server's) instead of the network. The agent endpoint reaches that server with
 * the same requests as a production issuer (discovery, JWKS, token exchange), but they never
 * pass through the API's own front door: they cost no rate limit of the service's own address,
 * and do not fail when that is spent.
 */
export function inProcessFetch(handler: RequestListener): typeof fetch {
  return (async (input: string | URL | Request, init?: RequestInit) => {
    const request = new Request(input, init);
    const payload = request.body ? Buffer.from(await request.arrayBuffer()) : undefined;
    const res = await inject(handler, {
      method: request.method as InjectOptions['method'],
      url: request.url,
      headers: Object.fromEntries(request.headers),
      ...(payload ? { payload } : {}),
    });
    const headers = new Headers();
    for (const [name, value] of Object.entries(res.headers)) {
      for (const v of [value].flat()) if (v !== undefined) headers.append(name, String(v));
    }
    const empty = res.statusCode === 204 || res.statusCode === 304 || res.rawPayload.length === 0;
    return new Response(empty ? null : res.rawPayload, { status: res.statusCode, headers });
  }) as typeof fetch;
}
