import { decodeJwt } from 'jose';
import { createTestEnv, json, type TestEnv } from '../support/api';
import { post } from '../support/bookings';
import { AssistantAuth, Browser, call, connect, playUser, startMcpWorld, type McpWorld } from './support';
import { IssuerKeyedAuth, connectModernAs } from './modern-client';
import { startDocumentServer, type DocumentServer } from './client-document-server';

let env: TestEnv;
let world: McpWorld;
let docs: DocumentServer;

beforeAll(async () => {
  env = await createTestEnv();
  docs = await startDocumentServer();
  // The development allowance: the test's documents are on this machine.
  world = await startMcpWorld(env, { MCP_CLIENT_DOCUMENT_ALLOW_LOOPBACK: 'true' });
});
afterAll(async () => {
  await docs?.close();
  await env.close();
});

/** A public client's document, as an assistant's site would serve it at `path`. */
function documentAt(path: string, extra: Record<string, unknown> = {}) {
  const url = `${docs.origin}${path}`;
  return docs.serve(path, {
    client_id: url,
    client_name: 'Acme Planner',
    redirect_uris: [world.redirectUri],
    grant_types: ['authorization_code', 'refresh_token'],
    response_types: ['code'],
    token_endpoint_auth_method: 'none',
    ...extra,
  });
}

/** Everything the authorization server keeps for a client: sessions, interactions, codes, grants, tokens. */
const keptFor = async (clientId: string) =>
  Number((await env.db('oauth_artifacts').whereRaw(`payload->>'clientId' = ?`, [clientId]).count('* as n'))[0]!.n);

/** A browser sent to the authorization endpoint by an assistant identified by `clientId`. */
async function authorize(clientId: string, redirectUri = world.redirectUri) {
  const u = new URL('/oauth/auth', world.api.url);
  const params = {
    client_id: clientId,
    redirect_uri: redirectUri,
    response_type: 'code',
    scope: 'flightdeck',
    resource: world.resourceUrl,
    state: 'xyz',
    code_challenge: 'E9Melhoa2OwvFrEMTJguCQaoeK1t8URWbuGJSstw-cM',
    code_challenge_method: 'S256',
  };
  for (const [k, v] of Object.entries(params)) u.searchParams.set(k, v);
  return new Browser().go(u.href);
}

async function expectRefused(clientId: string, redirectUri?: string) {
  const res = await authorize(clientId, redirectUri);
  // An error page for the person, never a redirect: the client may not be who it says.
  expect(res.headers.get('location')).toBeNull();
  expect(res.status).toBeGreaterThanOrEqual(400);
  const html = await res.text();
  expect(html).toContain('The connection was refused');
  expect(await keptFor(clientId)).toBe(0);
  return html;
}

describe('an assistant nobody registered connects with its Client ID Metadata Document', () => {
  test('a 2026-07-28 client: the consent names it, its site and exactly what the grant allows; the grant is its own', async () => {
    const url = documentAt('/agents/planner.json');
    const auth = new IssuerKeyedAuth(world.redirectUri, { metadataUrl: url });
    const { client, consentHtml } = await connectModernAs(world, { user: 'alice', workspace: 'acme' }, auth);
    expect(consentHtml).toContain('<strong data-client>Acme Planner</strong>');
    expect(consentHtml).toContain(`<strong data-client-host>${new URL(docs.origin).host}</strong>`);
    for (const exact of [
      '<code>list_personas</code>',
      '<code>prepare_action</code>',
      '<code>execute_action</code>',
      '<code data-action>campaign.launch</code>',
    ])
      expect(consentHtml).toContain(exact);
    expect(consentHtml).toMatch(/never approve/);
    // The SDK used the document's URL as its client id, and keeps it under this issuer only.
    expect(auth.clients.get(world.api.url)).toMatchObject({ client_id: url });
    expect(decodeJwt(auth.latest!.access_token)).toMatchObject({ client_id: url, org_id: 'acme', sub: 'alice' });

    const personas = await client.callTool({ name: 'list_personas', arguments: {} });
    expect(personas.isError).toBeFalsy();
    // A mandate names the client by its URL, like any other client id.
    const human = await world.human('acme', 'alice');
    const mandate = await post(
      world.api,
      human,
      `/api/v1/agent/mandates/${encodeURIComponent(url)}`,
      { allowedActions: ['campaign.pause'], budgetCeilingMinor: 0, currency: 'GBP' },
      'PUT',
    );
    expect(mandate.status).toBe(200);
    const mandates = await client.callTool({ name: 'list_mandates', arguments: {} });
    expect(JSON.stringify(mandates.structuredContent)).toContain(url);
    await client.close();
  });

  test('a 2025-11-25 client connects the same way', async () => {
    const url = documentAt('/agents/legacy.json', { client_name: 'Legacy Planner' });
    class DocumentAuth extends AssistantAuth {
      readonly clientMetadataUrl = url;
      info?: { client_id: string };
      override clientInformation() {
        return this.info as ReturnType<AssistantAuth['clientInformation']>;
      }
      saveClientInformation(info: { client_id: string }) {
        this.info = info;
      }
    }
    const auth = new DocumentAuth(world.redirectUri);
    const first = await connect(world, auth);
    await expect(first.client.callTool({ name: 'list_personas', arguments: {} })).rejects.toThrow();
    const { redirect, consentHtml } = await playUser(world, auth.authorizationUrl!, { user: 'bob', workspace: 'acme' });
    expect(consentHtml).toContain('<strong data-client>Legacy Planner</strong>');
    await first.transport.finishAuth(redirect.searchParams.get('code')!);
    await first.client.close();
    const { client } = await connect(world, auth);
    expect((await call(client, 'list_personas')).isError).toBeFalsy();
    expect(decodeJwt(auth.saved!.access_token)).toMatchObject({ client_id: url, sub: 'bob' });
    await client.close();
  });

  test('a document is kept as long as its Cache-Control says, and not fetched again meanwhile', async () => {
    const path = '/agents/cached.json';
    const url = documentAt(path);
    docs.serve(path, JSON.parse(await (await fetchDocument(path)).text()) as unknown, { 'cache-control': 'public, max-age=600' });
    const asked = () => docs.requests.filter((r) => r === path).length;
    const before = asked();
    for (let i = 0; i < 3; i++) expect((await authorize(url)).status).toBe(303);
    expect(asked() - before).toBe(1);
  });
});

/** Reads a served document back (the test's own server, certificate unchecked). */
async function fetchDocument(path: string) {
  const { request } = await import('node:https');
  return new Promise<Response>((resolve, reject) => {
    request(`${docs.origin}${path}`, { rejectUnauthorized: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve(new Response(Buffer.concat(chunks))));
    })
      .on('error', reject)
      .end();
  });
}

describe('a metadata document that cannot stand for its client is refused, and nothing is granted', () => {
  test('its client_id is not the URL it is served at', async () => {
    const url = `${docs.origin}/agents/impostor.json`;
    docs.serve('/agents/impostor.json', {
      client_id: `${docs.origin}/agents/planner.json`,
      client_name: 'Impostor',
      redirect_uris: [world.redirectUri],
      token_endpoint_auth_method: 'none',
    });
    expect(await expectRefused(url)).toContain('invalid_client');
  });

  test('it is at a private, link-local (cloud metadata) or unspecified address: refused before anything is sent', async () => {
    for (const url of [
      'https://10.20.30.40/agent.json',
      'https://169.254.169.254/latest/meta-data/agent.json',
      'https://[fd00::1]/agent.json',
      'https://0.0.0.0/agent.json',
    ])
      expect(await expectRefused(url)).toContain('invalid_client');
    expect(world.api.logs.some((l) => l.msg === 'client metadata document refused' && String(l.why).includes('private'))).toBe(true);
  });

  test('it is larger than 5 KB', async () => {
    const url = documentAt('/agents/huge.json', { client_name: 'Huge', logo_note: 'x'.repeat(6 * 1024) });
    const before = docs.requests.length;
    expect(await expectRefused(url)).toMatch(/invalid_client[\s\S]*metadata document fetch failed/);
    expect(docs.requests.length).toBeGreaterThan(before);
    expect(
      world.api.logs.some((l) => l.msg === 'client metadata document refused' && String(l.why).includes('larger than 5120 bytes')),
    ).toBe(true);
  });

  test('the redirect URL is not one the document lists', async () => {
    const url = documentAt('/agents/strict.json');
    for (const elsewhere of [`${world.redirectUri}/elsewhere`, 'https://attacker.example/callback'])
      expect(await expectRefused(url, elsewhere)).toContain('redirect_uri');
  });

  test('it declares a client secret method, or grants an assistant has no use for', async () => {
    await expectRefused(documentAt('/agents/secret.json', { token_endpoint_auth_method: 'client_secret_basic' }));
    await expectRefused(documentAt('/agents/jwt.json', { token_endpoint_auth_method: 'private_key_jwt', jwks: { keys: [] } }));
    await expectRefused(
      documentAt('/agents/exchange.json', { grant_types: ['authorization_code', 'urn:ietf:params:oauth:grant-type:token-exchange'] }),
    );
  });

  test('with unregistered clients turned off, a document URL is an unknown client, never fetched', async () => {
    const closed = await startMcpWorld(env, { MCP_CLIENT_ID_METADATA_DOCUMENTS: 'false', MCP_CLIENT_DOCUMENT_ALLOW_LOOPBACK: 'true' });
    const url = documentAt('/agents/closed.json');
    const before = docs.requests.length;
    const discovery = await json<Record<string, unknown>>(await fetch(`${closed.api.url}/.well-known/oauth-authorization-server`));
    expect(discovery.client_id_metadata_document_supported).toBeUndefined();
    const u = new URL('/oauth/auth', closed.api.url);
    u.searchParams.set('client_id', url);
    u.searchParams.set('redirect_uri', world.redirectUri);
    u.searchParams.set('response_type', 'code');
    const res = await new Browser().go(u.href);
    expect(res.headers.get('location')).toBeNull();
    expect(await res.text()).toContain('invalid_client');
    expect(docs.requests.length).toBe(before);
    await closed.api.close();
  });

  test('without the development allowance, a document on this machine is refused and never asked for', async () => {
    const strict = await startMcpWorld(env);
    const url = documentAt('/agents/local.json');
    const before = docs.requests.length;
    const u = new URL('/oauth/auth', strict.api.url);
    for (const [k, v] of Object.entries({
      client_id: url,
      redirect_uri: world.redirectUri,
      response_type: 'code',
      scope: 'flightdeck',
      resource: strict.resourceUrl,
      code_challenge: 'E9Melhoa2OwvFrEMTJguCQaoeK1t8URWbuGJSstw-cM',
      code_challenge_method: 'S256',
    }))
      u.searchParams.set(k, v);
    const res = await new Browser().go(u.href);
    expect(res.status).toBeGreaterThanOrEqual(400);
    expect(res.headers.get('location')).toBeNull();
    expect(docs.requests.length).toBe(before);
    const discovery = await json<Record<string, unknown>>(await fetch(`${strict.api.url}/.well-known/oauth-authorization-server`));
    expect(discovery.client_id_metadata_document_supported).toBe(true);
    await strict.api.close();
  });
});
