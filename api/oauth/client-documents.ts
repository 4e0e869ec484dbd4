import { errors, type Configuration } from 'oidc-provider';
import type { Logger } from '../../shared/logger';
import { FetchRefused, guardedFetch } from '../../shared/net/guarded-fetch';
import { urlRefusal, type AddressPolicy } from '../../shared/net/public-address';
import {
  CLIENT_DOCUMENT_MAX_BYTES,
  CLIENT_DOCUMENT_TIMEOUT_MS,
  clientDocumentRefusal,
  type ClientDocument,
} from '../../shared/mcp/client-document';

export interface ClientDocumentOptions {
  enabled: boolean;
  /** Development only: documents on this machine, their certificate unchecked. */
  allowLoopback: boolean;
  logger: Logger;
}

/**
 * Clients nobody registered, through oidc-provider's own Client ID Metadata Document support: it
 * resolves an https client_id to its document, checks the id matches, refuses shared secrets,
 * caches the document as its Cache-Control max-age or Expires say (between 30 s and a day) and
 * matches redirect URLs exactly. We give it the fetch (the public-address rules webhooks follow,
 * with a size and time limit and no redirects) and our own rules for an assistant (`allowClient`).
 */
export function clientDocumentConfiguration(o: ClientDocumentOptions): Pick<Configuration, 'fetch' | 'fetchResponseBodyLimits'> & {
  clientIdMetadataDocument: NonNullable<Configuration['features']>['clientIdMetadataDocument'];
} {
  const policy: AddressPolicy = { allowLoopback: o.allowLoopback };
  const refused = (clientId: string, why: string) => {
    o.logger.warn({ clientHost: URL.parse(clientId)?.host, why }, 'client metadata document refused');
    return false;
  };
  return {
    clientIdMetadataDocument: {
      enabled: o.enabled,
      ack: 'draft-02',
      // Refused as written (a private or loopback address, http) before anything is sent.
      allowFetch: async (_ctx, clientId) => {
        const why = urlRefusal(new URL(clientId), policy);
        return why ? refused(clientId, why) : true;
      },
      allowClient: async (_ctx, client) => {
        const why = clientDocumentRefusal(client.metadata() as ClientDocument, client.clientId);
        return why ? refused(client.clientId, why) : true;
      },
      cacheDuration: { min: 30, max: 86_400 },
    },
    // oidc-provider's other fetches (a client's jwks_uri, sector identifiers) go the same way.
    fetch: async (input, init = {}) => {
      const url = input instanceof Request ? input.url : input;
      try {
        return await guardedFetch(url, {
          policy,
          timeoutMs: CLIENT_DOCUMENT_TIMEOUT_MS,
          maxBytes: CLIENT_DOCUMENT_MAX_BYTES,
          maxRedirects: 0,
          method: init.method ?? 'GET',
          headers: new Headers(init.headers),
          ...(init.signal ? { signal: init.signal } : {}),
          trustLoopbackTls: o.allowLoopback,
        });
      } catch (err) {
        if (err instanceof FetchRefused) refused(String(url), err.message);
        throw err instanceof Error ? err : new errors.InvalidClient('client_id metadata document fetch failed');
      }
    },
    fetchResponseBodyLimits: { 'client_id metadata document': CLIENT_DOCUMENT_MAX_BYTES },
  };
}
