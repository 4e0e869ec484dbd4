import { createHash } from 'node:crypto';
import { canonicalize } from 'json-canonicalize';

/** RFC 8785 canonical JSON: the same value always serialises to the same bytes, whatever its key order. */
export function canonicalJson(value: unknown): string {
  return canonicalize(value);
}

/** Lowercase hex SHA-256 of the canonical JSON. */
export function digestOf(value: unknown): string {
  return createHash('sha256').update(canonicalJson(value)).digest('hex');
}
