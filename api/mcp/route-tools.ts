import { z, type ZodType } from 'zod';
import { badRequest, payloadTooLarge } from '../../shared/errors';
import { findAction } from '../../shared/agent/actions';
import { DIGEST_HEADER, STEP_HEADER } from '../../shared/agent/execution';
import { DigestSchema } from '../../shared/agent/governance';
import type { Principal } from '../../shared/auth/principal';
import type { Logger } from '../../shared/logger';
import type { Knex } from 'knex';
import type { HandlerResult, RouteDef } from '../http/route';
import { runGoverned } from '../http/execution-policies';
import { assertAgentMayCall } from '../http/agent-reach';
import { requireRouteScope } from '../http/route-scope';
import { checkPart, parsePart, requireParts } from '../http/validate';

/**
 * The agent's working set: each tool is a REST operation, with that operation's own zod
 * schemas as its input and its own handler (the same domain function) behind it, called in
 * process. Approving is not here and never will be: approvals are a person's.
 */
export const ROUTE_TOOLS: ReadonlyArray<{ name: string; operationId: string }> = [
  { name: 'list_personas', operationId: 'listPersonas' },
  { name: 'get_persona', operationId: 'getPersona' },
  { name: 'extract_persona', operationId: 'extractPersona' },
  { name: 'list_campaigns', operationId: 'listCampaigns' },
  { name: 'get_campaign', operationId: 'getCampaign' },
  { name: 'get_plan', operationId: 'getPlan' },
  { name: 'list_campaign_bookings', operationId: 'listCampaignBookings' },
  { name: 'get_booking', operationId: 'getBooking' },
  { name: 'list_amendments', operationId: 'listAmendments' },
  { name: 'get_delivery', operationId: 'getCampaignDelivery' },
  { name: 'list_actions', operationId: 'listAgentActions' },
  { name: 'list_mandates', operationId: 'listAgentMandates' },
  { name: 'prepare_action', operationId: 'prepareAgentAction' },
  { name: 'get_approval', operationId: 'getAgentApproval' },
  { name: 'resolve_step', operationId: 'resolveAgentExecution' },
  { name: 'get_run', operationId: 'getAgentRun' },
  { name: 'record_evidence', operationId: 'recordAgentEvidence' },
  { name: 'workspace_overview', operationId: 'workspaceOverview' },
  { name: 'billing_summary', operationId: 'billingSummary' },
  // Reconciliation, read only: importing invoices and resolving disputes are a person's.
  { name: 'get_statement', operationId: 'getSellerStatement' },
  { name: 'list_invoices', operationId: 'listInvoices' },
  { name: 'get_invoice', operationId: 'getInvoice' },
  { name: 'list_makegoods', operationId: 'listMakegoods' },
  { name: 'list_delivery_discrepancies', operationId: 'listDeliveryDiscrepancies' },
  { name: 'list_optimizations', operationId: 'listOptimizations' },
  { name: 'list_markets', operationId: 'listMarkets' },
  { name: 'prove_it', operationId: 'proveIt' },
  { name: 'list_lift_evidence', operationId: 'listLiftEvidence' },
  { name: 'list_webhook_event_types', operationId: 'listWebhookEventTypes' },
];

export interface CallContext {
  db: Knex;
  principal: Principal;
  requestId: string;
  log: Logger;
  /** Charges the operation's own rate-limit bucket (a 429 problem when it is spent), where the request was not charged to it. */
  charge?(route: RouteDef): Promise<void>;
}

/** An operation's fields; an optional body (`schema.optional()`) has its object's fields. */
const shapeOf = (schema: ZodType | undefined): Record<string, ZodType> => {
  const object = schema instanceof z.ZodOptional ? (schema.unwrap() as ZodType) : schema;
  return object instanceof z.ZodObject ? (object.shape as Record<string, ZodType>) : {};
};

const pick = (args: Record<string, unknown>, schema: ZodType | undefined) =>
  Object.fromEntries(Object.keys(shapeOf(schema)).flatMap((k) => (k in args ? [[k, args[k]]] : [])));

/** The tool's input: the operation's path parameters, query and body, side by side. */
export function toolInputSchema(route: RouteDef) {
  return z.strictObject({ ...shapeOf(route.params), ...shapeOf(route.query), ...shapeOf(route.body) });
}

async function invoke(route: RouteDef, ctx: CallContext, parts: { params: unknown; query: unknown; body: unknown }, headers = {}) {
  // Each call, as each REST request: a tool is never a way around its operation's limit.
  await ctx.charge?.(route);
  if (route.authorize) await route.authorize(ctx.principal as never);
  assertAgentMayCall(route, ctx.principal);
  await requireRouteScope(ctx.db, route, ctx.principal, parts.params);
  return route.handler({ ...parts, principal: ctx.principal, headers, requestId: ctx.requestId, log: ctx.log } as never);
}

/** Runs one operation for a tool call: the same parse, authorisation and handler as its REST route. */
export async function callRoute(route: RouteDef, args: Record<string, unknown>, ctx: CallContext): Promise<HandlerResult> {
  const [params, query, body] = requireParts(
    checkPart(route.params, pick(args, route.params), 'params'),
    checkPart(route.query, pick(args, route.query), 'query'),
    checkPart(route.body, pick(args, route.body), 'body', undefined),
  );
  const parts = { params, query, body };
  const result = await invoke(route, ctx, parts);
  if (!result) throw new Error(`${route.operationId} wrote its own response; it cannot back a tool`);
  return result;
}

export const ExecuteActionSchema = z.strictObject({
  stepId: z.string().min(1).max(128).describe('The execute step id a person received when approving.'),
  actionDigest: DigestSchema.describe('The approved action digest.'),
  name: z.string().min(1).max(120).describe('The action name, as prepared.'),
  parameters: z.record(z.string(), z.unknown()).describe('The action parameters, exactly as prepared.'),
  content: z
    .strictObject({
      type: z.enum(['application/json', 'text/csv']).describe('Its media type.'),
      text: z.string().min(1).describe('The body, whose UTF-8 bytes must hash to the prepared contentSha256.'),
    })
    .optional()
    .describe('Only for actions whose operation takes raw bytes (outcomes.import): the request body, exactly as hashed.'),
});

/**
 * Executes an approved action through its governed REST operation: the step id and digest
 * travel as the binding headers do, the digest is recomputed from the real request, and the
 * receipt answers any replay.
 */
export async function executeAction(
  db: Knex,
  routes: RouteDef[],
  args: z.infer<typeof ExecuteActionSchema>,
  ctx: CallContext,
): Promise<HandlerResult> {
  const contract = findAction(args.name);
  const route = routes.find((r) => r.governedAction === args.name);
  if (!contract || !route) {
    throw badRequest(`Unknown action ${args.name}; see list_actions.`, [{ path: 'name', message: 'unknown action' }], 'unknown_action');
  }
  // The contract names its path parameters ({campaignId}); the route has its own names (:id), in the same order.
  const contractKeys = [...contract.route.matchAll(/\{(\w+)\}/g)].map((m) => m[1]!);
  const routeKeys = [...route.path.matchAll(/:(\w+)/g)].map((m) => m[1]!);
  const rawParams = Object.fromEntries(routeKeys.map((k, i) => [k, String(args.parameters[contractKeys[i]!] ?? '')]));
  const params = route.params ? parsePart(route.params, rawParams, 'params') : {};
  const headers: Record<string, string> = { [STEP_HEADER]: args.stepId, [DIGEST_HEADER]: args.actionDigest };
  let sent: unknown;
  if (route.rawBody) {
    // The operation reads bytes (CSV or JSON rows): they travel as content, bound to the approval by their SHA-256.
    if (!args.content) {
      throw badRequest(
        `${args.name} takes its request body as content: { type, text }, the text whose SHA-256 is contentSha256.`,
        [{ path: 'content', message: 'required for this action' }],
        'content_required',
      );
    }
    sent = Buffer.from(args.content.text, 'utf8');
    if (route.bodyLimitBytes && (sent as Buffer).length > route.bodyLimitBytes) {
      throw payloadTooLarge(route.bodyLimitBytes);
    }
    headers['content-type'] = args.content.type;
  } else {
    if (args.content) {
      throw badRequest(
        `${args.name} takes no content; its body is its parameters.`,
        [{ path: 'content', message: 'not taken by this action' }],
        'unexpected_content',
      );
    }
    sent = Object.fromEntries(Object.entries(args.parameters).filter(([k]) => !contractKeys.includes(k)));
  }
  const body = route.body ? parsePart(route.body, sent, 'body') : undefined;
  return runGoverned({ db }, args.name, ctx.principal, { params, body }, headers, ctx.requestId, () =>
    invoke(route, ctx, { params, query: {}, body }, headers),
  );
}
