import { createHash } from 'node:crypto';
import { badRequest } from '../errors';

/**
 * Request bytes that are parsed by the domain (CSV or JSON), identified by their SHA-256.
 * Idempotency and action digests see `{ sha256, sizeBytes }`, never the bytes themselves.
 */
export class RawBody {
  readonly sha256: string;
  constructor(readonly bytes: Buffer) {
    this.sha256 = createHash('sha256').update(bytes).digest('hex');
  }
  toJSON() {
    return { sha256: this.sha256, sizeBytes: this.bytes.length };
  }
}

/** The SHA-256 of a governed request's raw body, for the action's `contentSha256` parameter. */
export const rawBodySha256 = (body: unknown): string | undefined => (body instanceof RawBody ? body.sha256 : undefined);

/** A Content-Type's media type and charset, lower-cased. */
export function mediaTypeOf(contentType: string | undefined): { type: string; charset: string | null } {
  const [type = '', ...params] = (contentType ?? '').split(';').map((s) => s.trim().toLowerCase());
  const charset =
    params
      .find((p) => p.startsWith('charset='))
      ?.slice('charset='.length)
      .replace(/"/g, '') ?? null;
  return { type, charset };
}

/** The body as UTF-8 text, or a 400 when it is not UTF-8. */
export function decodeUtf8(bytes: Buffer): string {
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    throw badRequest('The body is not valid UTF-8.', undefined, 'invalid_encoding');
  }
}
