import fs from 'node:fs';
import { createHash, randomBytes } from 'node:crypto';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { OAuthClientProvider } from '@modelcontextprotocol/sdk/client/auth.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { OAuthClientInformationMixed, OAuthClientMetadata, OAuthTokens } from '@modelcontextprotocol/sdk/shared/auth.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { SignJWT, importJWK, type JWK } from 'jose';
import { loadDevIssuer, type DevIssuer } from '../../shared/auth/dev-issuer';
import { createTokenVerifier } from '../../shared/auth/verifier';
import type { TestApi, TestEnv } from '../support/api';
import { SPENDER_PERMISSIONS, TEST_AUDIENCE, TEST_ISSUER } from '../support/issuer';
import { freePort } from '../support/ports';

export const CLIENT_ID = 'flightdeck-assistant';

export interface McpWorld {
  api: TestApi;
  /** The development issuer the API trusts: people's REST tokens, and the exchanged agent credentials. */
  issuer: DevIssuer;
  resourceUrl: string;
  redirectUri: string;
  human(org: string, user?: string): Promise<string>;
}

/**
 * The API as `npm start` runs it: the development issuer for API tokens and the embedded
 * authorization server for /mcp, listening at the URL its tokens name as audience.
 */
export async function startMcpWorld(env: TestEnv, overrides: Record<string, string> = {}): Promise<McpWorld> {
  const port = await freePort();
  const redirectUri = `http://127.0.0.1:${await freePort()}/callback`;
  const resourceUrl = `http://127.0.0.1:${port}/mcp`;
  const issuer = await loadDevIssuer(env.dataDir, TEST_AUDIENCE, TEST_ISSUER);
  const api = await env.api(
    { PORT: String(port), MCP_RESOURCE_URL: resourceUrl, MCP_REDIRECT_URIS: redirectUri, ...overrides },
    {
      auth: {
        verifier: createTokenVerifier({ issuer: issuer.issuer, audience: issuer.audience, jwks: issuer.jwks }),
        devIssuer: issuer,
        mode: 'development-issuer',
      },
    },
  );
  return {
    api,
    issuer,
    resourceUrl,
    redirectUri,
    human: (org, user = `${org}-lead`) => issuer.sign({ org, user, permissions: ['agent:approve', ...SPENDER_PERMISSIONS] }),
  };
}

/** An assistant's OAuth client state: the SDK asks it for what it knows and tells it what to keep. */
export class AssistantAuth implements OAuthClientProvider {
  saved?: OAuthTokens;
  verifier?: string;
  authorizationUrl?: URL;
  constructor(
    readonly redirectUri: string,
    private readonly clientId = CLIENT_ID,
  ) {}
  get redirectUrl() {
    return this.redirectUri;
  }
  get clientMetadata(): OAuthClientMetadata {
    return { client_name: 'test assistant', redirect_uris: [this.redirectUri], token_endpoint_auth_method: 'none' };
  }
  clientInformation(): OAuthClientInformationMixed {
    return { client_id: this.clientId };
  }
  tokens() {
    return this.saved;
  }
  saveTokens(tokens: OAuthTokens) {
    this.saved = tokens;
  }
  redirectToAuthorization(url: URL) {
    this.authorizationUrl = url;
  }
  saveCodeVerifier(v: string) {
    this.verifier = v;
  }
  codeVerifier() {
    if (!this.verifier) throw new Error('no code verifier');
    return this.verifier;
  }
}

export async function connect(world: McpWorld, auth?: OAuthClientProvider) {
  const client = new Client({ name: 'test-assistant', version: '1.0.0' });
  const transport = new StreamableHTTPClientTransport(new URL(world.resourceUrl), auth ? { authProvider: auth } : {});
  await client.connect(transport);
  return { client, transport };
}

/** A browser with a cookie jar: follows nothing by itself, so the test sees every step. */
export class Browser {
  private readonly jar = new Map<string, string>();
  async go(url: string, init: RequestInit = {}): Promise<Response> {
    const headers = new Headers(init.headers);
    if (this.jar.size) headers.set('cookie', [...this.jar].map(([k, v]) => `${k}=${v}`).join('; '));
    const res = await fetch(url, { ...init, headers, redirect: 'manual' });
    for (const c of res.headers.getSetCookie()) {
      const [pair] = c.split(';');
      const i = pair!.indexOf('=');
      this.jar.set(pair!.slice(0, i), pair!.slice(i + 1));
    }
    return res;
  }
  submit(base: string, html: string, action: RegExp, fields: Record<string, string>) {
    const form = [...html.matchAll(/<form method="post" action="([^"]+)"/g)].map((m) => m[1]!).find((a) => action.test(a));
    if (!form) throw new Error(`no form matching ${action} in ${html}`);
    return this.go(new URL(form, base).href, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams(fields),
    });
  }
}

export interface SignIn {
  user: string;
  workspace: string;
  product?: string;
  channels?: string;
}

/**
 * Plays the user at the development login and consent pages, from the authorization URL the
 * assistant was sent to, until the authorization server redirects back with a code.
 */
export async function playUser(world: McpWorld, authorizationUrl: URL, who: SignIn) {
  const browser = new Browser();
  const base = world.api.url;
  let res = await browser.go(authorizationUrl.href);
  let consentHtml = '';
  for (let hops = 0; hops < 12; hops++) {
    if (res.status === 200) {
      const html = await res.text();
      if (html.includes('/login"')) {
        res = await browser.submit(base, html, /\/login$/, {
          user: who.user,
          workspace: who.workspace,
          product: who.product ?? 'flightdeck',
          channels: who.channels ?? '',
        });
      } else if (html.includes('/confirm"')) {
        consentHtml = html;
        res = await browser.submit(base, html, /\/confirm$/, { decision: 'allow' });
      } else {
        throw new Error(`unexpected page: ${html}`);
      }
      continue;
    }
    const location = res.headers.get('location');
    if (!location || res.status < 300 || res.status >= 400) throw new Error(`unexpected ${res.status}: ${await res.text()}`);
    const next = new URL(location, base);
    if (next.href.startsWith(world.redirectUri)) return { redirect: next, consentHtml };
    res = await browser.go(next.href);
  }
  throw new Error('too many redirects');
}

/** The full connection: 401 from a tool, discovery, authorization code + PKCE, and a reconnect with the grant. */
export async function connectAs(world: McpWorld, who: SignIn) {
  const auth = new AssistantAuth(world.redirectUri);
  const first = await connect(world, auth);
  const refused = await first.client.callTool({ name: 'list_personas', arguments: {} }).then(
    () => null,
    (err: Error) => err,
  );
  if (!refused || !auth.authorizationUrl) throw new Error(`expected the 401 that starts OAuth, got ${String(refused)}`);
  const { redirect, consentHtml } = await playUser(world, auth.authorizationUrl, who);
  const code = redirect.searchParams.get('code');
  if (!code) throw new Error(`no code in ${redirect.href}`);
  await first.transport.finishAuth(code);
  await first.client.close();
  const session = await connect(world, auth);
  return { ...session, auth, code, consentHtml, authorizationUrl: auth.authorizationUrl, refused };
}

export async function call(client: Client, name: string, args: Record<string, unknown> = {}) {
  return (await client.callTool({ name, arguments: args })) as CallToolResult & { structuredContent?: Record<string, unknown> };
}

/** A token signed with the embedded authorization server's own key, with whatever claims a test needs. */
export async function forgeGrant(
  env: TestEnv,
  claims: Record<string, unknown>,
  opts: { audience: string; issuer: string; expiresAt?: number },
) {
  const keys = JSON.parse(fs.readFileSync(path.join(env.dataDir, 'dev-authorization-server', 'keys.json'), 'utf8')) as { signingJwk: JWK };
  const key = await importJWK(keys.signingJwk, 'ES256');
  const now = Math.floor(Date.now() / 1000);
  return new SignJWT(claims)
    .setProtectedHeader({ alg: 'ES256', kid: keys.signingJwk.kid!, typ: 'at+jwt' })
    .setIssuer(opts.issuer)
    .setAudience(opts.audience)
    .setIssuedAt(now - 120)
    .setExpirationTime(opts.expiresAt ?? now + 600)
    .sign(key);
}

/** A raw JSON-RPC POST to /mcp, as any HTTP client could send it. */
export function rpc(world: McpWorld, body: unknown, headers: Record<string, string> = {}) {
  return fetch(world.resourceUrl, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
    body: JSON.stringify(body),
  });
}

export const toolCall = (name: string, args: Record<string, unknown> = {}) => ({
  jsonrpc: '2.0',
  id: 1,
  method: 'tools/call',
  params: { name, arguments: args },
});

/** What the token endpoint answered: its status and JSON body. */
export interface TokenAnswer {
  status: number;
  body: { access_token?: string; refresh_token?: string; expires_in?: number; error?: string; error_description?: string };
}

async function tokenRequest(world: McpWorld, form: Record<string, string>): Promise<TokenAnswer> {
  const res = await fetch(`${world.api.url}/oauth/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams(form),
  });
  return { status: res.status, body: (await res.json()) as TokenAnswer['body'] };
}

/** A user signs in and consents in a browser, as an assistant would send them to; the code comes back unredeemed. */
export async function authorizationCode(world: McpWorld, who: SignIn) {
  const verifier = randomBytes(32).toString('base64url');
  const u = new URL('/oauth/auth', world.api.url);
  for (const [k, v] of Object.entries({
    client_id: CLIENT_ID,
    redirect_uri: world.redirectUri,
    response_type: 'code',
    scope: 'flightdeck',
    resource: world.resourceUrl,
    state: randomBytes(8).toString('hex'),
    code_challenge: createHash('sha256').update(verifier).digest('base64url'),
    code_challenge_method: 'S256',
  }))
    u.searchParams.set(k, v);
  const { redirect } = await playUser(world, u, who);
  const code = redirect.searchParams.get('code');
  if (!code) throw new Error(`no code in ${redirect.href}`);
  return { code, verifier };
}

/** The assistant redeems a code at the token endpoint. */
export const redeemCode = (world: McpWorld, code: string, verifier: string) =>
  tokenRequest(world, {
    grant_type: 'authorization_code',
    code,
    code_verifier: verifier,
    redirect_uri: world.redirectUri,
    client_id: CLIENT_ID,
    resource: world.resourceUrl,
  });

/** The assistant trades its refresh token for a new grant (and a new refresh token: they rotate). */
export const refreshGrant = (world: McpWorld, refreshToken: string) =>
  tokenRequest(world, { grant_type: 'refresh_token', refresh_token: refreshToken, client_id: CLIENT_ID, resource: world.resourceUrl });
