import { discoverAuthorizationServerMetadata } from '@modelcontextprotocol/sdk/client/auth.js';
import type { AuthorizationServerMetadata } from '@modelcontextprotocol/sdk/shared/auth.js';
import { unauthenticated, unavailable } from '../errors';
import { remoteKeys, type KeySource, type RemoteKeyOptions } from '../auth/verifier';

export const TOKEN_EXCHANGE_GRANT = 'urn:ietf:params:oauth:grant-type:token-exchange';
export const ACCESS_TOKEN_TYPE = 'urn:ietf:params:oauth:token-type:access_token';

export interface ExchangedCredential {
  accessToken: string;
  expiresIn: number;
}

const down = () => unavailable('The authorization server is unavailable. Retry shortly.', 'authorization_server_unavailable');

/**
 * The agent endpoint's view of its authorization server: metadata discovered by RFC 8414 /
 * OIDC discovery, its published keys, and the RFC 8693 token exchange at its token endpoint,
 * where the endpoint authenticates as its own confidential client. The embedded development
 * server is reached the same way as a production issuer.
 */
export class AuthorizationServer {
  private metadataPromise?: Promise<AuthorizationServerMetadata>;
  private keySource?: KeySource;

  constructor(
    readonly issuer: string,
    private readonly client: { id: string; secret: string },
    /** The API's own rules for an identity provider's keys: cache age, cooldown, stale-if-error. */
    private readonly keyOptions: Omit<RemoteKeyOptions, 'fetch'>,
    private readonly fetchFn: typeof fetch = fetch,
  ) {}

  metadata(): Promise<AuthorizationServerMetadata> {
    this.metadataPromise ??= discoverAuthorizationServerMetadata(this.issuer, { fetchFn: this.fetchFn }).then((m) => {
      if (!m) throw new Error('no metadata');
      return m;
    });
    // A failed discovery is retried on the next request, not cached.
    return this.metadataPromise.catch(() => {
      this.metadataPromise = undefined;
      throw down();
    });
  }

  /** The keys it signs grants with, at the `jwks_uri` its metadata names. */
  async keys(): Promise<KeySource> {
    if (this.keySource) return this.keySource;
    const { jwks_uri } = (await this.metadata()) as AuthorizationServerMetadata & { jwks_uri?: string };
    if (!jwks_uri) throw down();
    this.keySource = remoteKeys(jwks_uri, { ...this.keyOptions, fetch: this.fetchFn });
    return this.keySource;
  }

  /** Trades the user's grant for an API credential for `audience`; a refusal is a 401, an outage a 503. */
  async exchange(subjectToken: string, audience: string): Promise<ExchangedCredential> {
    const { token_endpoint } = await this.metadata();
    const basic = Buffer.from(`${encodeURIComponent(this.client.id)}:${encodeURIComponent(this.client.secret)}`).toString('base64');
    let res: Response;
    try {
      res = await this.fetchFn(token_endpoint, {
        method: 'POST',
        headers: { authorization: `Basic ${basic}`, 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
        body: new URLSearchParams({
          grant_type: TOKEN_EXCHANGE_GRANT,
          subject_token: subjectToken,
          subject_token_type: ACCESS_TOKEN_TYPE,
          requested_token_type: ACCESS_TOKEN_TYPE,
          audience,
        }),
        signal: AbortSignal.timeout(5000),
      });
    } catch {
      throw down();
    }
    const body = (await res.json().catch(() => ({}))) as { access_token?: unknown; expires_in?: unknown; error?: unknown };
    if (res.status === 400 && (body.error === 'invalid_grant' || body.error === 'invalid_request')) {
      throw unauthenticated('The authorization server refused to exchange this grant. Connect again.');
    }
    if (!res.ok || typeof body.access_token !== 'string') throw down();
    const expiresIn = typeof body.expires_in === 'number' && body.expires_in > 0 ? body.expires_in : 60;
    return { accessToken: body.access_token, expiresIn };
  }
}
