import { decodeJwt, type JWK } from 'jose';
import type { Knex } from 'knex';
import { Provider, errors, type Configuration } from 'oidc-provider';
import type { DevIssuer } from '../../shared/auth/dev-issuer';
import { localKeys } from '../../shared/auth/verifier';
import { createGrantVerifier } from '../../shared/mcp/grant';
import { TOKEN_EXCHANGE_GRANT } from '../../shared/mcp/authorization-server';
import { accountOf } from './account';
import { artifactStore } from './artifact-store';
import { clientDocumentConfiguration, type ClientDocumentOptions } from './client-documents';
import type { DevAuthorizationKeys } from './dev-keys';
import { errorPage } from './pages';
import { registerTokenExchange } from './token-exchange';

export interface DevAuthorizationServerOptions {
  /** The issuer identifier: the service's origin, so discovery lives at the root /.well-known paths. */
  issuer: string;
  resourceUrl: string;
  scope: string;
  clientId: string;
  redirectUris: string[];
  exchangeClientId: string;
  keys: DevAuthorizationKeys;
  apiIssuer: DevIssuer;
  apiTokenTtlSeconds: number;
  trustProxy: boolean;
  db: Knex;
  /** The staff console's public client: its tokens are API tokens, with the signed-in person's permissions. */
  console?: { clientId: string; redirectUri: string };
  /** Clients nobody registered, identified by the URL of their metadata document. */
  clientDocuments: ClientDocumentOptions;
}

export const CONSOLE_SCOPE = 'console';

/** Short: assistants renew it with their refresh token, and a revoked grant is refused at the next exchange anyway. */
const GRANT_TTL_SECONDS = 600;
const CONSOLE_TOKEN_TTL_SECONDS = 8 * 3600;

/**
 * In development every API token comes from the development issuer the API trusts, so the
 * console's access token is re-signed by it, claim for claim, before it leaves the token endpoint.
 */
function signConsoleTokensAsApi(provider: Provider, clientId: string, apiIssuer: DevIssuer): void {
  provider.use(async (ctx, next) => {
    await next();
    const body = ctx.body as { access_token?: unknown; expires_in?: unknown } | undefined;
    if (ctx.oidc?.route !== 'token' || ctx.oidc.client?.clientId !== clientId || typeof body?.access_token !== 'string') return;
    const claims = decodeJwt(body.access_token);
    if (claims.aud !== apiIssuer.audience) return;
    body.access_token = await apiIssuer.sign({
      org: String(claims.org_id),
      user: String(claims.sub),
      product: String(claims.product),
      ...(Array.isArray(claims.channels) ? { channels: claims.channels as string[] } : {}),
      permissions: Array.isArray(claims.permissions) ? (claims.permissions as string[]) : [],
      ttlSeconds: typeof body.expires_in === 'number' ? body.expires_in : CONSOLE_TOKEN_TTL_SECONDS,
    });
  });
}

/**
 * The embedded development authorization server, built on oidc-provider: authorization code
 * with PKCE S256 only, one pre-registered public client with exact redirect URLs, clients nobody
 * registered through their Client ID Metadata Document, no dynamic registration, grants for
 * exactly one resource (the agent endpoint) and one scope, and the token exchange the agent
 * endpoint uses to obtain API credentials. Authorization responses carry `iss` (RFC 9207).
 */
export function createDevAuthorizationServer(o: DevAuthorizationServerOptions): Provider {
  const { d: _d, ...publicJwk } = o.keys.signingJwk;
  void _d;
  const isConsole = (clientId: string) => clientId === o.console?.clientId;
  const grantKeys = localKeys({ keys: [publicJwk as JWK] });
  const { clientIdMetadataDocument, ...fetching } = clientDocumentConfiguration(o.clientDocuments);

  const configuration: Configuration = {
    adapter: artifactStore(o.db),
    clients: [
      {
        client_id: o.clientId,
        client_name: 'MCP assistant',
        token_endpoint_auth_method: 'none',
        redirect_uris: o.redirectUris,
        grant_types: ['authorization_code', 'refresh_token'],
        response_types: ['code'],
      },
      ...(o.console
        ? [
            {
              client_id: o.console.clientId,
              client_name: 'Flightdeck console',
              token_endpoint_auth_method: 'none' as const,
              redirect_uris: [o.console.redirectUri],
              grant_types: ['authorization_code'],
              response_types: ['code' as const],
            },
          ]
        : []),
      {
        client_id: o.exchangeClientId,
        client_name: 'Flightdeck agent endpoint',
        client_secret: o.keys.exchangeClientSecret,
        token_endpoint_auth_method: 'client_secret_basic',
        grant_types: [TOKEN_EXCHANGE_GRANT],
        redirect_uris: [],
        response_types: [],
      },
    ],
    clientDefaults: { id_token_signed_response_alg: 'ES256' },
    jwks: { keys: [o.keys.signingJwk as never] },
    cookies: { keys: [o.keys.cookieKey] },
    findAccount: (_ctx, id) => (accountOf(id) ? { accountId: id, claims: () => ({ sub: id }) } : undefined),
    scopes: o.console ? [o.scope, CONSOLE_SCOPE] : [o.scope],
    claims: { openid: ['sub'] },
    responseTypes: ['code'],
    // Assistants stay connected: refresh tokens for the public client, rotated on every use.
    issueRefreshToken: (_ctx, client) => client.grantTypeAllowed('refresh_token'),
    pkce: { required: () => true },
    ...fetching,
    features: {
      clientIdMetadataDocument,
      devInteractions: { enabled: false },
      registration: { enabled: false },
      revocation: { enabled: true },
      resourceIndicators: {
        enabled: true,
        defaultResource: (_ctx, client) => (isConsole(client.clientId) ? o.apiIssuer.audience : o.resourceUrl),
        useGrantedResource: () => true,
        getResourceServerInfo: (_ctx, indicator, client) => {
          if (isConsole(client.clientId)) {
            if (indicator !== o.apiIssuer.audience) throw new errors.InvalidTarget('the console signs in to the API only');
            return {
              scope: CONSOLE_SCOPE,
              audience: o.apiIssuer.audience,
              accessTokenTTL: CONSOLE_TOKEN_TTL_SECONDS,
              accessTokenFormat: 'jwt',
              jwt: { sign: { alg: 'ES256' } },
            };
          }
          if (indicator !== o.resourceUrl) throw new errors.InvalidTarget('the only resource here is the agent endpoint');
          return {
            scope: o.scope,
            audience: o.resourceUrl,
            accessTokenTTL: GRANT_TTL_SECONDS,
            accessTokenFormat: 'jwt',
            jwt: { sign: { alg: 'ES256' } },
          };
        },
      },
    },
    formats: {
      customizers: {
        // The grant names the user and the workspace they bound it to at consent.
        jwt: (_ctx, token, jwt) => {
          const account = 'accountId' in token && token.accountId ? accountOf(token.accountId) : null;
          if (!account) return;
          jwt.payload.sub = account.user;
          jwt.payload.org_id = account.workspace;
          jwt.payload.product = account.product;
          if (account.channels) jwt.payload.channels = account.channels;
          // Permissions are a person's: only the console's API tokens carry them, never an agent's grant.
          if (jwt.payload.aud === o.apiIssuer.audience) jwt.payload.permissions = account.permissions ?? [];
          // An agent's grant names the consent it stands for, so the exchange can refuse it once that is revoked.
          else if ('grantId' in token && token.grantId) jwt.payload.grant_id = token.grantId;
        },
      },
    },
    interactions: { url: (_ctx, interaction) => `/oauth/interaction/${interaction.uid}` },
    routes: {
      authorization: '/oauth/auth',
      token: '/oauth/token',
      jwks: '/oauth/jwks',
      revocation: '/oauth/token/revocation',
      userinfo: '/oauth/me',
      end_session: '/oauth/session/end',
      introspection: '/oauth/token/introspection',
      pushed_authorization_request: '/oauth/request',
      code_verification: '/oauth/device',
      device_authorization: '/oauth/device/auth',
      backchannel_authentication: '/oauth/backchannel',
      challenge: '/oauth/challenge',
      credential: '/oauth/credential',
      registration: '/oauth/reg',
    },
    ttl: {
      AccessToken: GRANT_TTL_SECONDS,
      AuthorizationCode: 60,
      IdToken: 3600,
      Interaction: 600,
      Session: 24 * 3600,
      Grant: 14 * 24 * 3600,
      RefreshToken: 14 * 24 * 3600,
    },
    renderError: (ctx, out) => {
      ctx.type = 'html';
      ctx.body = errorPage(String(out.error), out.error_description ? String(out.error_description) : undefined);
    },
    // Browser-based assistants call the token endpoint from their redirect URL's origin.
    clientBasedCORS: (_ctx, origin, client) => client.redirectUris?.some((u) => new URL(u).origin === origin) ?? false,
  };

  const provider = new Provider(o.issuer, configuration);
  provider.proxy = o.trustProxy;
  if (o.console) signConsoleTokensAsApi(provider, o.console.clientId, o.apiIssuer);
  registerTokenExchange(provider, {
    exchangeClientId: o.exchangeClientId,
    verifyGrant: createGrantVerifier({ issuer: o.issuer, audience: o.resourceUrl, keys: grantKeys }),
    apiIssuer: o.apiIssuer,
    ttlSeconds: o.apiTokenTtlSeconds,
    grantIsLive: async (grantId) => (await provider.Grant.find(grantId)) !== undefined,
  });
  return provider;
}
