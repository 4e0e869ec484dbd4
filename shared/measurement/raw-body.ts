import { createHash } from 'node:crypto';

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
