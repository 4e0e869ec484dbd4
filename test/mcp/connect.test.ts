import fs from 'node:fs';
import path from 'node:path';
import { createTestEnv, json, type TestEnv } from '../support/api';
import { CLIENT_ID, call, connect, connectAs, startMcpWorld, type McpWorld } from './support';

let env: TestEnv;
let world: McpWorld;

beforeAll(async () => {
  env = await createTestEnv();
  world = await startMcpWorld(env);
});
afterAll(() => env.close());

describe('connecting an assistant to /mcp', () => {
  test('without a grant, the handshake, the tool list and get_platform_info answer, and nothing else', async () => {
    const { client } = await connect(world);
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name)).toEqual(
      expect.arrayContaining(['get_platform_info', 'list_personas', 'prepare_action', 'execute_action']),
    );
    const info = await call(client, 'get_platform_info');
    expect(info.isError).toBeFalsy();
    expect(info.structuredContent).toMatchObject({
      name: 'Flightdeck',
      channels: ['ctv', 'audio', 'tv', 'cinema', 'dooh', 'search', 'social'],
      connect: { endpoint: world.resourceUrl, clientId: CLIENT_ID, scope: 'flightdeck' },
      openapi: `${world.api.url}/api/v1/openapi.json`,
    });
    await client.close();
  });

  test('a tool call without a grant is the 401 that starts OAuth, and the full flow ends with list_personas answering', async () => {
    const { client, consentHtml, refused } = await connectAs(world, { user: 'alice', workspace: 'acme' });
    expect(String(refused)).toMatch(/Unauthorized/i);
    expect(consentHtml).toContain('data-workspace>acme<');
    expect(consentHtml).toContain('data-user>alice<');
    expect(consentHtml).toContain(CLIENT_ID);
    const personas = await call(client, 'list_personas');
    expect(personas.isError).toBeFalsy();
    expect(personas.structuredContent).toEqual({ personas: [] });
    await client.close();
  });

  test('the protected resource metadata names the authorization server, whose discovery has PKCE S256 and no registration', async () => {
    const plain = await json(await fetch(`${world.api.url}/.well-known/oauth-protected-resource`));
    const suffixed = await json(await fetch(`${world.api.url}/.well-known/oauth-protected-resource/mcp`));
    expect(plain).toEqual(suffixed);
    expect(plain).toMatchObject({ resource: world.resourceUrl, authorization_servers: [world.api.url], scopes_supported: ['flightdeck'] });
    const as = await json(await fetch(`${world.api.url}/.well-known/oauth-authorization-server`));
    const oidc = await json(await fetch(`${world.api.url}/.well-known/openid-configuration`));
    expect(as).toEqual(oidc);
    expect(as).toMatchObject({ issuer: world.api.url, code_challenge_methods_supported: ['S256'], response_types_supported: ['code'] });
    expect(as).not.toHaveProperty('registration_endpoint');
  });
});

describe('the agent endpoint’s documentation', () => {
  const doc = fs.readFileSync(path.join(__dirname, '../../docs/mcp.md'), 'utf8');

  test('docs/mcp.md names every tool served, and only those, with how many there are', async () => {
    const { client } = await connect(world);
    const served = (await client.listTools()).tools.map((t) => t.name).sort();
    await client.close();
    const documented = [...doc.matchAll(/^\| `([a-z_]+)` +\|/gm)].map((m) => m[1]!).sort();
    expect(documented).toEqual(served);
    expect(doc).toContain(`Every tool served (${served.length})`);
  });

  test('docs/mcp.md lists every governed action with the parameter names list_actions gives', async () => {
    const token = await world.human('acme');
    const { actions } = await json<{ actions: Array<{ name: string; parameters: { properties: Record<string, unknown> } }> }>(
      await world.api.fetch('/api/v1/agent/actions', { token }),
    );
    const rows = [...doc.matchAll(/^\| ((?:`[a-z]+\.[a-z]+`(?:, )?)+) +\| (.+?) +\|$/gm)];
    const documented = new Map(rows.flatMap((m) => [...m[1]!.matchAll(/`([a-z.]+)`/g)].map((a) => [a[1]!, m[2]!] as const)));
    expect([...documented.keys()].sort()).toEqual(actions.map((a) => a.name).sort());
    for (const a of actions) {
      const names = [...documented.get(a.name)!.matchAll(/`(\w+)`/g)].map((m) => m[1]!);
      for (const parameter of Object.keys(a.parameters.properties))
        expect(`${a.name}: ${names.includes(parameter)}`).toBe(`${a.name}: true`);
    }
  });
});
