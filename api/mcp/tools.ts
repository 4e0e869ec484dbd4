import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { z } from 'zod';
import { CHANNELS, PRODUCTS, entitledChannels } from '../../shared/auth/products';
import type { Principal } from '../../shared/auth/principal';
import { badRequest, unauthenticated } from '../../shared/errors';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { problemBody } from '../middleware/problem';
import type { Logger } from '../../shared/logger';
import type { RouteDef } from '../http/route';
import { version } from '../../package.json';
import { ExecuteActionSchema, ROUTE_TOOLS, callRoute, executeAction, toolInputSchema, type CallContext } from './route-tools';
import { problemResult, toolFailure, toolResult } from './tool-results';
import type { AgentEndpoint, ApiDeps } from '../deps';

export const PUBLIC_TOOL = 'get_platform_info';

export interface ToolScope {
  deps: ApiDeps;
  endpoint: AgentEndpoint;
  routes: RouteDef[];
  /** Null until the caller presents a grant: then only get_platform_info answers. */
  principal: Principal | null;
  requestId: string;
  log: Logger;
  /** Charges a tool call to its REST operation's own rate-limit bucket, as the REST route is charged. */
  charge: NonNullable<CallContext['charge']>;
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
      protectedResourceMetadata: endpoint.metadataUrl,
      authorizationServer: endpoint.issuer,
      scope: endpoint.scope,
      grant: 'authorization_code with PKCE S256',
      ...(endpoint.devServer ? { clientId: config.MCP_CLIENT_ID, redirectUris: config.MCP_REDIRECT_URIS } : {}),
    },
    openapi: `${origin}/api/v1/openapi.json`,
    governance:
      'Agents prepare exact actions; a person approves the digest over the REST API; the agent executes with the step id and digest.',
  };
}

/** One MCP server per request (stateless Streamable HTTP), its tools bound to the caller. */
export function buildMcpServer(s: ToolScope): McpServer {
  const server = new McpServer({ name: 'flightdeck', version });
  s.endpoint.toolList.serve(server);
  // The SDK checks tool arguments against the input schema before our handler runs and reports
  // a failure as bare text. Agents act on `code` and `recovery`, so its refusals carry them too
  // (test/mcp/governed-tools.test.ts holds this to account across SDK upgrades).
  (server as unknown as { createToolError(message: string): CallToolResult }).createToolError = (message: string) =>
    problemResult(problemBody(badRequest(message, undefined, 'invalid_tool_arguments'), s.requestId));

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
    // Unreachable over HTTP (the endpoint answers 401 first); kept so a tool can never run unauthenticated.
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

  for (const t of ROUTE_TOOLS) {
    const route = s.routes.find((r) => r.operationId === t.operationId);
    if (!route) throw new Error(`no route ${t.operationId} for tool ${t.name}`);
    server.registerTool(
      t.name,
      {
        description: route.summary,
        inputSchema: toolInputSchema(route),
        annotations: { readOnlyHint: route.method === 'get' },
      },
      async (args: Record<string, unknown>) => run(t.name, (ctx) => callRoute(route, args, ctx)),
    );
  }

  server.registerTool(
    'execute_action',
    {
      description:
        'Execute an action a person approved, once: carry the execute step id and the approved digest, with the name and parameters as prepared. A replay returns the first receipt.',
      inputSchema: ExecuteActionSchema,
      annotations: { destructiveHint: true, idempotentHint: true },
    },
    async (args) => run('execute_action', (ctx) => executeAction(s.deps.db, s.routes, args, ctx)),
  );

  return server;
}
