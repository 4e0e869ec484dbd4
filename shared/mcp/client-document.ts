/**
 * What a client nobody registered must declare in its Client ID Metadata Document to connect an
 * assistant (draft-ietf-oauth-client-id-metadata-document): it is identified by the https URL the
 * document is served at, it is a public client (no secret: authorization code with PKCE S256,
 * refresh tokens at most), and it names its exact redirect URLs. An external authorization server
 * that accepts such clients for /mcp should hold them to the same rules (docs/mcp.md).
 */
export interface ClientDocument {
  client_id?: unknown;
  client_name?: unknown;
  token_endpoint_auth_method?: unknown;
  grant_types?: unknown;
  response_types?: unknown;
  redirect_uris?: unknown;
}

/** Largest metadata document fetched, and how long its server has to answer. */
export const CLIENT_DOCUMENT_MAX_BYTES = 5 * 1024;
export const CLIENT_DOCUMENT_TIMEOUT_MS = 2_500;

const GRANTS = new Set(['authorization_code', 'refresh_token']);
const strings = (v: unknown): string[] | null => (Array.isArray(v) && v.every((x) => typeof x === 'string') ? (v as string[]) : null);

/** Why this document cannot stand for the client at `url`, or null when it can. */
export function clientDocumentRefusal(doc: ClientDocument, url: string): string | null {
  if (doc.client_id !== url) return 'its client_id is not the URL it was fetched from';
  if (doc.token_endpoint_auth_method !== 'none') return 'token_endpoint_auth_method must be "none" (a public client, with PKCE)';
  const grants = strings(doc.grant_types) ?? ['authorization_code'];
  if (!grants.includes('authorization_code') || grants.some((g) => !GRANTS.has(g)))
    return 'grant_types may hold only authorization_code and refresh_token, and must hold authorization_code';
  const responses = strings(doc.response_types) ?? ['code'];
  if (responses.length !== 1 || responses[0] !== 'code') return 'response_types must be ["code"]';
  const redirects = strings(doc.redirect_uris);
  if (!redirects?.length) return 'redirect_uris must list the exact redirect URLs';
  if (doc.client_name !== undefined && (typeof doc.client_name !== 'string' || doc.client_name.length > 200))
    return 'client_name must be a string of at most 200 characters';
  return null;
}
