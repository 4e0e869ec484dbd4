import {
  McpServer,
  ProtocolError,
  ProtocolErrorCode,
  ResourceNotFoundError,
  ResourceTemplate,
  inputRequired,
  requireScopes,
  type CallToolResult,
  type ServerContext,
} from '@modelcontextprotocol/server';
import { z } from 'zod';
import { CHANNELS, PRODUCTS, entitledChannels } from '../../shared/auth/products';
import type { Principal } from '../../shared/auth/principal';
import { badRequest, unauthenticated } from '../../shared/errors';
import { consoleBaseOf } from '../../shared/config/config';
import { problemBody } from '../middleware/problem';
import type { Logger } from '../../shared/logger';
import type { RouteDef } from '../http/route';
import { version } from '../../package.json';
import { ExecuteActionSchema, ROUTE_TOOLS, callRoute, executeAction, toolInputSchema, type CallContext } from './route-tools';
import { problemResult, toolFailure, toolResult } from './tool-results';
import { serveToolListFrom } from './tool-list';
import type { AgentEndpoint, ApiDeps } from '../deps';

export const PUBLIC_TOOL = 'get_platform_info';
export const PLATFORM_RESOURCE = 'flightdeck://platform';
const APPROVAL_RESOURCE = 'flightdeck://approvals/{id}';

/** What may be asked without a grant: the handshake or discovery, the lists, and what the platform is. */
const PUBLIC_METHODS = new Set([
  'initialize',
  'notifications/initialized',
  'notifications/cancelled',
  'ping',
  'server/discover',
  'tools/list',
  'resources/list',
  'resources/templates/list',
]);

export function needsGrant(m: unknown): boolean {
  if (!m || typeof m !== 'object' || !('method' in m)) return false;
  const { method, params } = m as { method: unknown; params?: { name?: unknown; uri?: unknown } };
  if (method === 'tools/call') return params?.name !== PUBLIC_TOOL;
  if (method === 'resources/read') return params?.uri !== PLATFORM_RESOURCE;
  return typeof method !== 'string' || !PUBLIC_METHODS.has(method);
}

export interface ToolScope {
  deps: ApiDeps;
  endpoint: AgentEndpoint;
  routes: RouteDef[];
  /** Null until the caller presents a grant with the endpoint's scope: then only the public surface answers. */
  principal: Principal | null;
  requestId: string;
  log: Logger;
  /** Charges a tool call to its REST operation's own rate-limit bucket, as the REST route is charged. */
  charge: NonNullable<CallContext['charge']>;
  /** The protocol version the request speaks: 2025-11-25 (`legacy`) or 2026-07-28 (`modern`). */
  era: 'legacy' | 'modern';
}

/** What any caller may know before connecting: who we are and how to connect. */
export function platformInfo(endpoint: AgentEndpoint, config: ApiDeps['config']) {
  const origin = new URL(endpoint.resourceUrl).origin;
  return {
    name: 'Flightdeck',
    version,
    description: 'Multi-channel media buying: plan, approve, book and monitor paid media across seven channels.',
    channels: [...CHANNELS],
    products: PRODUCTS.map((id) => ({ id, channels: entitledChannels(id) })),
    connect: {
      endpoint: endpoint.resourceUrl,
      transport: 'streamable-http',
      protocolVersions: ['2025-11-25', '2026-07-28'],
      protectedResourceMetadata: endpoint.metadataUrl,
      authorizationServer: endpoint.issuer,
      scope: endpoint.scope,
      grant: 'authorization_code with PKCE S256',
      ...(endpoint.devServer
        ? {
            clientId: config.MCP_CLIENT_ID,
            redirectUris: config.MCP_REDIRECT_URIS,
            clientIdMetadataDocuments: config.MCP_CLIENT_ID_METADATA_DOCUMENTS,
          }
        : {}),
    },
    openapi: `${origin}/api/v1/openapi.json`,
    governance:
      'Agents prepare exact actions; a person approves the digest over the REST API; the agent executes with the step id and digest.',
  };
}

/** Where a person with agent:approve reviews and approves one prepared action. */
export const approvalUrlOf = (config: ApiDeps['config'], approvalId: string) =>
  `${consoleBaseOf(config)}/console/approvals#ap-${encodeURIComponent(approvalId)}`;

type ApprovalBody = { approval?: { id?: unknown; status?: unknown; actionName?: unknown; actionDigest?: unknown } };

/**
 * One MCP server per request (both protocol versions are stateless here), its tools bound to the
 * caller. Every tool but get_platform_info needs the endpoint's scope: a grant without it gets the
 * step-up challenge (403 `insufficient_scope`) before the tool runs.
 */
export function buildMcpServer(s: ToolScope): McpServer {
  const server = new McpServer({ name: 'flightdeck', version });
  serveToolListFrom(s.endpoint.toolList, server);
  // The SDK checks tool arguments against the input schema before our handler runs and reports
  // a failure as bare text. Agents act on `code` and `recovery`, so its refusals carry them too
  // (test/mcp/governed-tools.test.ts holds this to account across SDK upgrades).
  (server as unknown as { createToolError(message: string): CallToolResult }).createToolError = (message: string) =>
    problemResult(problemBody(badRequest(message, undefined, 'invalid_tool_arguments'), s.requestId));
  const needsScope = requireScopes(s.endpoint.scope);

  server.registerTool(
    PUBLIC_TOOL,
    {
      title: 'Platform information',
      description: 'Name, version, channels, products, how to connect (OAuth) and where the OpenAPI document is. No sign-in needed.',
      inputSchema: z.strictObject({}),
      annotations: { readOnlyHint: true },
    },
    async () => toolResult(platformInfo(s.endpoint, s.deps.config)),
  );

  const run = async (tool: string, call: (ctx: CallContext) => Promise<{ status: number; body?: unknown }>) => {
    // Unreachable over HTTP (the endpoint answers 401, the scope check 403, first); kept so a tool can never run unauthenticated.
    if (!s.principal) return toolFailure(unauthenticated('Connect with OAuth first.'), s.requestId, s.log, tool);
    try {
      const result = await call({ db: s.deps.db, principal: s.principal, requestId: s.requestId, log: s.log, charge: s.charge });
      // A governed replay may carry the first execution's refusal as its receipt.
      if (result.status >= 400) return problemResult(result.body as Record<string, unknown>);
      return toolResult(result.body);
    } catch (err) {
      return toolFailure(err, s.requestId, s.log, tool);
    }
  };

  /**
   * 2026-07-28 has a shape for "a person must act first": while the approval is pending, the
   * result asks the client to open the approval page (URL elicitation) and call again once the
   * person is done. Clients on 2025-11-25, or that cannot open a URL, get the pending approval
   * and poll, as before; either way the answer after approval is the same.
   */
  const awaitPerson = (result: CallToolResult, ctx: ServerContext) => {
    const approval = (result.structuredContent as ApprovalBody | undefined)?.approval;
    if (s.era !== 'modern' || result.isError || approval?.status !== 'pending') return result;
    // Asked once per call: after the person was sent to the page, the answer is whatever now stands.
    if (ctx.mcpReq.inputResponses?.approval !== undefined) return result;
    if (!server.server.getClientCapabilities()?.elicitation?.url) return result;
    return inputRequired({
      inputRequests: {
        approval: inputRequired.elicitUrl({
          message: `A person with agent:approve must approve ${String(approval.actionName)} (digest ${String(approval.actionDigest)}) before it can be executed. Open the page, approve or abandon it there, then continue.`,
          url: approvalUrlOf(s.deps.config, String(approval.id)),
        }),
      },
    });
  };

  for (const t of ROUTE_TOOLS) {
    const route = s.routes.find((r) => r.operationId === t.operationId);
    if (!route) throw new Error(`no route ${t.operationId} for tool ${t.name}`);
    server.registerTool(
      t.name,
      {
        description: route.summary,
        inputSchema: toolInputSchema(route),
        annotations: { readOnlyHint: route.method === 'get' },
        scopeChallenge: needsScope,
      },
      async (args: Record<string, unknown>, ctx: ServerContext) => {
        const result = await run(t.name, (c) => callRoute(route, args, c));
        return t.name === 'get_approval' ? awaitPerson(result, ctx) : result;
      },
    );
  }

  server.registerTool(
    'execute_action',
    {
      description:
        'Execute an action a person approved, once: carry the execute step id and the approved digest, with the name and parameters as prepared. A replay returns the first receipt.',
      inputSchema: ExecuteActionSchema,
      annotations: { destructiveHint: true, idempotentHint: true },
      scopeChallenge: needsScope,
    },
    async (args) => run('execute_action', (ctx) => executeAction(s.deps.db, s.routes, args, ctx)),
  );

  server.registerResource(
    'platform',
    PLATFORM_RESOURCE,
    { title: 'Platform information', description: 'What get_platform_info answers. No sign-in needed.', mimeType: 'application/json' },
    async (uri) => ({
      contents: [{ uri: uri.href, mimeType: 'application/json', text: JSON.stringify(platformInfo(s.endpoint, s.deps.config)) }],
    }),
  );

  const approvalRoute = s.routes.find((r) => r.operationId === 'getAgentApproval');
  if (approvalRoute) {
    server.registerResource(
      'approval',
      new ResourceTemplate(APPROVAL_RESOURCE, { list: undefined }),
      {
        title: 'An approval',
        description: 'A prepared action’s approval, as get_approval answers it.',
        mimeType: 'application/json',
        scopeChallenge: needsScope,
      },
      async (uri, variables) => {
        const result = await run('approval resource', (c) => callRoute(approvalRoute, { id: String(variables.id) }, c));
        // A read that fails is a protocol error carrying the problem (a 404 the SDK's own "not found").
        const problem = result.isError ? (result.structuredContent as { status?: number; detail?: string }) : null;
        if (problem?.status === 404) throw new ResourceNotFoundError(uri.href);
        if (problem) throw new ProtocolError(ProtocolErrorCode.InvalidParams, String(problem.detail), problem);
        return { contents: [{ uri: uri.href, mimeType: 'application/json', text: JSON.stringify(result.structuredContent) }] };
      },
    );
  }

  return server;
}
