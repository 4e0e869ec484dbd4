import { discoverAuthorizationServerMetadata, exchangeAuthorization, startAuthorization } from '@modelcontextprotocol/sdk/client/auth.js';
import type { AuthorizationServerMetadata } from '@modelcontextprotocol/sdk/shared/auth.js';

export interface SignInOptions {
  issuer: string;
  clientId: string;
  clientSecret?: string;
  redirectUri: string;
  /** The API's audience: the console signs in for an API token, the same kind every API call carries. */
  audience: string;
  /** Ask for a fresh login every time (the development server, where anyone may be anyone). */
  forceLogin?: boolean;
}

/**
 * OpenID Connect authorization code + PKCE (S256) against the configured issuer, with the
 * MCP SDK's OAuth client functions (discovery, PKCE, code exchange) rather than our own.
 */
export class ConsoleSignIn {
  private metadataPromise?: Promise<AuthorizationServerMetadata>;

  constructor(readonly o: SignInOptions) {}

  private metadata(): Promise<AuthorizationServerMetadata> {
    this.metadataPromise ??= discoverAuthorizationServerMetadata(this.o.issuer).then((m) => {
      if (!m) throw new Error('the issuer publishes no metadata');
      return m;
    });
    return this.metadataPromise.catch((err: unknown) => {
      this.metadataPromise = undefined;
      throw err;
    });
  }

  private get client() {
    return { client_id: this.o.clientId, ...(this.o.clientSecret ? { client_secret: this.o.clientSecret } : {}) };
  }

  async start(state: string): Promise<{ url: URL; codeVerifier: string }> {
    const metadata = await this.metadata();
    const { authorizationUrl, codeVerifier } = await startAuthorization(this.o.issuer, {
      metadata,
      clientInformation: this.client,
      redirectUrl: this.o.redirectUri,
      scope: 'openid console',
      state,
    });
    // The exact audience string (a URL object would add a trailing slash): RFC 8707 `resource`, and `audience` for providers that use it.
    authorizationUrl.searchParams.set('resource', this.o.audience);
    authorizationUrl.searchParams.set('audience', this.o.audience);
    if (this.o.forceLogin) authorizationUrl.searchParams.set('prompt', 'login');
    return { url: authorizationUrl, codeVerifier };
  }

  async finish(code: string, codeVerifier: string): Promise<{ accessToken: string; expiresIn: number }> {
    const tokens = await exchangeAuthorization(this.o.issuer, {
      metadata: await this.metadata(),
      clientInformation: this.client,
      authorizationCode: code,
      codeVerifier,
      redirectUri: this.o.redirectUri,
    });
    return { accessToken: tokens.access_token, expiresIn: tokens.expires_in ?? 3600 };
  }
}
