import { decodeJwt } from 'jose';
import type { Client as LegacyClient } from '@modelcontextprotocol/sdk/client/index.js';
import type { Client as ModernClient } from '@modelcontextprotocol/client';
import { createTestEnv, json, type TestEnv } from '../support/api';
import { post, type BookingBody } from '../support/bookings';
import { approvedCampaign } from '../agent/support';
import { CLIENT_ID, call, connect, connectAs, forgeGrant, rpc, toolCall, type McpWorld, startMcpWorld } from './support';
import { IssuerKeyedAuth, connectModern, connectModernAs } from './modern-client';

let env: TestEnv;
let world: McpWorld;
let human: string;
let legacy: LegacyClient;
let modern: ModernClient;
let modernAuth: IssuerKeyedAuth;

beforeAll(async () => {
  env = await createTestEnv();
  world = await startMcpWorld(env);
  human = await world.human('acme', 'alice');
  const mandate = await post(
    world.api,
    human,
    `/api/v1/agent/mandates/${CLIENT_ID}`,
    { allowedActions: ['campaign.launch'], budgetCeilingMinor: 1_000_000, currency: 'GBP' },
    'PUT',
  );
  expect(mandate.status).toBe(200);
  ({ client: legacy } = await connectAs(world, { user: 'alice', workspace: 'acme' }));
  modernAuth = new IssuerKeyedAuth(world.redirectUri);
  ({ client: modern } = await connectModernAs(world, { user: 'alice', workspace: 'acme' }, modernAuth, { openPages: true }));
});
afterAll(async () => {
  await legacy?.close();
  await modern?.close();
  await env.close();
});

type Structured = Record<string, unknown>;
const structured = (r: unknown) => (r as { structuredContent?: Structured }).structuredContent ?? {};

describe('both protocol versions at /mcp', () => {
  test('a 2026-07-28 client connects without a handshake and lists the same tools, resources and platform as a 2025-11-25 client', async () => {
    const anonymousModern = await connectModern(world);
    const anonymousLegacy = await connect(world);
    expect(anonymousModern.client.getProtocolEra()).toBe('modern');
    const [modernTools, legacyTools] = [await anonymousModern.client.listTools(), await anonymousLegacy.client.listTools()];
    expect(modernTools.tools.length).toBeGreaterThan(20);
    expect(modernTools.tools.map((t) => [t.name, t.inputSchema])).toEqual(legacyTools.tools.map((t) => [t.name, t.inputSchema]));

    const uri = 'flightdeck://platform';
    const [modernPlatform, legacyPlatform] = [
      await anonymousModern.client.readResource({ uri }),
      await anonymousLegacy.client.readResource({ uri }),
    ];
    expect(modernPlatform.contents).toEqual(legacyPlatform.contents);
    const info = JSON.parse((modernPlatform.contents[0] as { text: string }).text) as { connect: Structured };
    expect(info.connect).toMatchObject({ protocolVersions: ['2025-11-25', '2026-07-28'], clientIdMetadataDocuments: true });
    const [modernInfo, legacyInfo] = [
      await anonymousModern.client.callTool({ name: 'get_platform_info', arguments: {} }),
      await anonymousLegacy.client.callTool({ name: 'get_platform_info', arguments: {} }),
    ];
    expect(structured(modernInfo)).toEqual(structured(legacyInfo));
    expect(structured(modernInfo)).toEqual(info);

    // Without a grant, only the public surface answers, in either version.
    await expect(anonymousModern.client.callTool({ name: 'list_personas', arguments: {} })).rejects.toThrow();
    await anonymousModern.client.close();
    await anonymousLegacy.client.close();
  });

  test('the modern client signed in with the authorization code flow, its credentials kept under the issuer, and reads as the legacy one does', async () => {
    expect(modern.getProtocolEra()).toBe('modern');
    expect([...modernAuth.saved.keys()]).toEqual([world.api.url]);
    expect(decodeJwt(modernAuth.latest!.access_token)).toMatchObject({ client_id: CLIENT_ID, org_id: 'acme', sub: 'alice' });
    const campaignId = await approvedCampaign(world.api, human, 12_000);
    const [m, l] = [
      await modern.callTool({ name: 'get_campaign', arguments: { id: campaignId } }),
      await legacy.callTool({ name: 'get_campaign', arguments: { id: campaignId } }),
    ];
    expect(structured(m)).toEqual(structured(l));
    expect(structured(m)).toMatchObject({ campaign: { id: campaignId } });
    const approval = await modern.readResource({ uri: 'flightdeck://approvals/00000000-0000-4000-8000-000000000000' }).then(
      () => null,
      (err: Error) => err,
    );
    expect(approval?.message).toMatch(/not found/i);
  });

  test('the governed flow: a 2025-11-25 client polls the approval; a 2026-07-28 client is sent to the approval page and continues once the person approved; both launch once', async () => {
    const launch = async (
      client: { callTool: LegacyClient['callTool'] },
      campaignId: string,
      afterPrepare: (approvalId: string, digest: string) => Promise<Structured>,
    ) => {
      const prepared = structured(
        await client.callTool({
          name: 'prepare_action',
          arguments: { name: 'campaign.launch', parameters: { campaignId }, budgetMinor: 15_000, currency: 'GBP' },
        }),
      ) as { approvalId: string; actionDigest: string };
      const approval = await afterPrepare(prepared.approvalId, prepared.actionDigest);
      const stepId = (approval.approval as { executeStepId: string }).executeStepId;
      const executed = structured(
        await client.callTool({
          name: 'execute_action',
          arguments: { stepId, actionDigest: prepared.actionDigest, name: 'campaign.launch', parameters: { campaignId } },
        }),
      );
      return { prepared, approval, booking: (executed as { booking: BookingBody }).booking };
    };
    const approve = async (approvalId: string, digest: string) => {
      const res = await post(world.api, human, `/api/v1/agent/approvals/${approvalId}/approve`, { expectedActionDigest: digest });
      expect(res.status).toBe(200);
      return (await json<{ executeStep: { id: string } }>(res)).executeStep.id;
    };

    // 2025-11-25: the agent polls get_approval until a person approved.
    const legacyCampaign = await approvedCampaign(world.api, human, 12_000);
    const viaLegacy = await launch(legacy, legacyCampaign, async (approvalId, digest) => {
      expect(structured(await call(legacy, 'get_approval', { id: approvalId }))).toMatchObject({
        approval: { status: 'pending', executeStepId: null },
      });
      await approve(approvalId, digest);
      return structured(await call(legacy, 'get_approval', { id: approvalId }));
    });

    // 2026-07-28: get_approval asks the client to send its user to the approval page; the person
    // approves there, the client answers, and the SDK asks again, getting the approved approval.
    const pages: Array<{ url: string; message: string }> = [];
    modern.setRequestHandler('elicitation/create', async (request) => {
      if (request.params.mode !== 'url') return { action: 'decline' as const };
      pages.push({ url: request.params.url, message: request.params.message });
      const approvalId = decodeURIComponent(new URL(request.params.url).hash.replace('#ap-', ''));
      const pending = await json<{ approval: { actionDigest: string } }>(
        await world.api.fetch(`/api/v1/agent/approvals/${approvalId}`, { token: human }),
      );
      await approve(approvalId, pending.approval.actionDigest);
      return { action: 'accept' as const };
    });
    const modernCampaign = await approvedCampaign(world.api, human, 12_000);
    const viaModern = await launch(modern as unknown as LegacyClient, modernCampaign, async (approvalId) => {
      const answer = structured(await modern.callTool({ name: 'get_approval', arguments: { id: approvalId } }));
      expect(pages).toEqual([
        {
          url: `${world.api.deps.config.PUBLIC_BASE_URL ?? `http://localhost:${world.api.deps.config.PORT}`}/console/approvals#ap-${approvalId}`,
          message: expect.stringContaining('campaign.launch'),
        },
      ]);
      return answer;
    });

    for (const [via, campaignId] of [
      [viaLegacy, legacyCampaign],
      [viaModern, modernCampaign],
    ] as const) {
      expect(via.approval).toMatchObject({ approval: { status: 'approved', decidedBy: 'alice', executeStepId: expect.any(String) } });
      expect(via.booking.campaignId).toBe(campaignId);
      for (const e of via.booking.events) expect(e).toMatchObject({ actor: 'agent', source: 'mcp', actorId: `alice|agent:${CLIENT_ID}` });
      expect(await env.db('bookings').where({ campaign_id: campaignId }).count('* as n')).toEqual([{ n: '1' }]);
    }
    // The same shapes, field for field, whichever version carried them.
    expect(Object.keys(viaModern.prepared).sort()).toEqual(Object.keys(viaLegacy.prepared).sort());
    expect(Object.keys(viaModern.approval.approval as Structured).sort()).toEqual(
      Object.keys(viaLegacy.approval.approval as Structured).sort(),
    );
    expect(Object.keys(viaModern.booking).sort()).toEqual(Object.keys(viaLegacy.booking).sort());
  });

  test('a 2026-07-28 client that cannot open pages gets the pending approval, as a 2025-11-25 client does', async () => {
    const plain = await connectModern(world, { auth: modernAuth });
    const campaignId = await approvedCampaign(world.api, human, 12_000);
    const prepared = structured(
      await plain.client.callTool({
        name: 'prepare_action',
        arguments: { name: 'campaign.launch', parameters: { campaignId }, budgetMinor: 15_000, currency: 'GBP' },
      }),
    ) as { approvalId: string };
    const pending = await plain.client.callTool({ name: 'get_approval', arguments: { id: prepared.approvalId } });
    expect(structured(pending)).toMatchObject({ approval: { id: prepared.approvalId, status: 'pending', executeStepId: null } });
    await plain.client.close();
  });
});

describe('authorization challenges name the scope', () => {
  const grantClaims = { sub: 'alice', org_id: 'acme', client_id: CLIENT_ID };
  const challenge = (res: Response) => res.headers.get('www-authenticate') ?? '';

  test('a 401 asks for the endpoint’s scope and names the resource metadata', async () => {
    const res = await rpc(world, toolCall('list_personas'));
    expect(res.status).toBe(401);
    expect(challenge(res)).toMatch(/^Bearer error="invalid_token"/);
    expect(challenge(res)).toContain('scope="flightdeck"');
    expect(challenge(res)).toContain(`resource_metadata="${world.api.url}/.well-known/oauth-protected-resource/mcp"`);
  });

  test('a grant without the scope may list tools, but a tool is the step-up challenge (403 insufficient_scope) and prepares nothing, in either version', async () => {
    const narrow = await forgeGrant(env, { ...grantClaims, scope: 'profile' }, { issuer: world.api.url, audience: world.resourceUrl });
    const headers = { authorization: `Bearer ${narrow}` };
    expect((await rpc(world, { jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} }, headers)).status).toBe(200);
    const runs = await env.db('agent_runs').count('* as n');
    const prepare = toolCall('prepare_action', { name: 'campaign.launch', parameters: {}, budgetMinor: 0, currency: 'GBP' });
    const legacyRes = await rpc(world, prepare, headers);
    const modernRes = await rpc(
      world,
      {
        ...prepare,
        params: {
          ...prepare.params,
          _meta: {
            'io.modelcontextprotocol/protocolVersion': '2026-07-28',
            'io.modelcontextprotocol/clientInfo': { name: 'raw', version: '1' },
            'io.modelcontextprotocol/clientCapabilities': {},
          },
        },
      },
      { ...headers, 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'tools/call', 'mcp-name': 'prepare_action' },
    );
    for (const res of [legacyRes, modernRes]) {
      expect(res.status).toBe(403);
      expect(challenge(res)).toMatch(/^Bearer error="insufficient_scope"/);
      expect(challenge(res)).toContain('scope="flightdeck"');
      expect(challenge(res)).toContain('resource_metadata="');
    }
    expect(await env.db('agent_runs').count('* as n')).toEqual(runs);
  });

  test('the authorization response names its issuer (RFC 9207), as discovery says it will', async () => {
    const discovery = await json<Structured>(await fetch(`${world.api.url}/.well-known/oauth-authorization-server`));
    expect(discovery).toMatchObject({
      issuer: world.api.url,
      authorization_response_iss_parameter_supported: true,
      client_id_metadata_document_supported: true,
    });
    // The modern client's sign-in above came back with it, and the SDK checked it before redeeming the code.
    const auth = new IssuerKeyedAuth(world.redirectUri);
    const { redirect } = await connectModernAs(world, { user: 'bob', workspace: 'acme' }, auth);
    expect(redirect.searchParams.get('iss')).toBe(world.api.url);
  });
});
