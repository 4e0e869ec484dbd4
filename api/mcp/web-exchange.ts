import { Readable } from 'node:stream';
import type { Request, Response } from 'express';

/**
 * The request as the MCP SDK's web-standard transports read it. Its JSON body was parsed by
 * express already and is handed to them beside it (`parsedBody`), so the Request carries none;
 * it is aborted when the client goes away before the answer.
 */
export function webRequestOf(req: Request, res: Response): globalThis.Request {
  const headers = new Headers();
  for (const [name, value] of Object.entries(req.headers)) {
    for (const v of [value].flat()) if (v !== undefined && name !== 'content-length') headers.append(name, v);
  }
  const aborted = new AbortController();
  res.on('close', () => {
    if (!res.writableFinished) aborted.abort();
  });
  return new globalThis.Request(new URL(req.originalUrl, `http://${req.headers.host ?? 'localhost'}`), {
    method: req.method,
    headers,
    signal: aborted.signal,
  });
}

/** Writes a web Response (a JSON body, or a stream) to express's response. */
export async function sendWebResponse(res: Response, answer: globalThis.Response): Promise<void> {
  res.status(answer.status);
  answer.headers.forEach((value, name) => res.setHeader(name, value));
  if (!answer.body) {
    res.end();
    return;
  }
  await new Promise<void>((resolve, reject) => {
    Readable.fromWeb(answer.body as import('node:stream/web').ReadableStream)
      .on('error', reject)
      .pipe(res)
      .on('finish', resolve)
      .on('close', resolve);
  });
}
