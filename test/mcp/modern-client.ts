import { Client, StreamableHTTPClientTransport, type OAuthClientProvider, type OAuthDiscoveryState } from '@modelcontextprotocol/client';
import type { OAuthClientInformationMixed, OAuthClientMetadata, OAuthTokens } from '@modelcontextprotocol/sdk/shared/auth.js';
import { CLIENT_ID, playUser, type McpWorld, type SignIn } from './support';

export const MODERN = '2026-07-28';

/**
 * An assistant's OAuth state as docs/mcp.md advises keeping it: client information and tokens
 * keyed by the authorization server's issuer, never shared between servers. With a metadata
 * document URL and no client id, the SDK uses that URL as the client id (CIMD).
 */
export class IssuerKeyedAuth implements OAuthClientProvider {
  readonly clients = new Map<string, OAuthClientInformationMixed>();
  readonly saved = new Map<string, OAuthTokens>();
  latest?: OAuthTokens;
  verifier?: string;
  discovery?: OAuthDiscoveryState;
  authorizationUrl?: URL;
  constructor(
    readonly redirectUri: string,
    private readonly registered: { clientId: string } | { metadataUrl: string } = { clientId: CLIENT_ID },
  ) {}
  get redirectUrl() {
    return this.redirectUri;
  }
  get clientMetadataUrl() {
    return 'metadataUrl' in this.registered ? this.registered.metadataUrl : undefined;
  }
  get clientMetadata(): OAuthClientMetadata {
    return { client_name: 'modern test assistant', redirect_uris: [this.redirectUri], token_endpoint_auth_method: 'none' };
  }
  clientInformation(ctx?: { issuer: string }) {
    if ('clientId' in this.registered) return { client_id: this.registered.clientId, ...(ctx ? { issuer: ctx.issuer } : {}) };
    return ctx ? this.clients.get(ctx.issuer) : undefined;
  }
  saveClientInformation(info: OAuthClientInformationMixed, ctx?: { issuer: string }) {
    if (ctx) this.clients.set(ctx.issuer, info);
  }
  tokens(ctx?: { issuer: string }) {
    return ctx ? this.saved.get(ctx.issuer) : this.latest;
  }
  saveTokens(tokens: OAuthTokens, ctx?: { issuer: string }) {
    if (ctx) this.saved.set(ctx.issuer, tokens);
    this.latest = tokens;
  }
  redirectToAuthorization(url: URL) {
    this.authorizationUrl = url;
  }
  saveCodeVerifier(v: string) {
    this.verifier = v;
  }
  saveDiscoveryState(state: OAuthDiscoveryState) {
    this.discovery = state;
  }
  discoveryState() {
    return this.discovery;
  }
  codeVerifier() {
    if (!this.verifier) throw new Error('no code verifier');
    return this.verifier;
  }
}

export interface ModernOptions {
  auth?: OAuthClientProvider;
  /** Declares URL elicitation: the client can send its user to a page. */
  openPages?: boolean;
}

/** A 2026-07-28 client (SDK v2), pinned to that version: it never falls back to the 2025 handshake. */
export async function connectModern(world: McpWorld, o: ModernOptions = {}) {
  const client = new Client(
    { name: 'modern-test-assistant', version: '1.0.0' },
    {
      versionNegotiation: { mode: { pin: MODERN } },
      capabilities: o.openPages ? { elicitation: { url: {} } } : {},
    },
  );
  const transport = new StreamableHTTPClientTransport(new URL(world.resourceUrl), o.auth ? { authProvider: o.auth } : {});
  await client.connect(transport);
  return { client, transport };
}

/**
 * The full connection on 2026-07-28: discovery, a tool call refused with 401, OAuth (authorization
 * code + PKCE, the response's `iss` checked by the SDK) and a new connection with the grant.
 */
export async function connectModernAs(world: McpWorld, who: SignIn, auth: IssuerKeyedAuth, o: Omit<ModernOptions, 'auth'> = {}) {
  const first = await connectModern(world, { ...o, auth });
  const refused = await first.client.callTool({ name: 'list_personas', arguments: {} }).then(
    () => null,
    (err: Error) => err,
  );
  if (!refused || !auth.authorizationUrl) throw new Error(`expected the 401 that starts OAuth, got ${String(refused)}`);
  const { redirect, consentHtml } = await playUser(world, auth.authorizationUrl, who);
  await first.transport.finishAuth(redirect.searchParams);
  await first.client.close();
  const session = await connectModern(world, { ...o, auth });
  return { ...session, redirect, consentHtml };
}
