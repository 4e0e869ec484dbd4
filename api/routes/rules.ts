import { z } from 'zod';
import { DryRunRequestSchema, dryRunRule } from '../../shared/rules/dry-run';
import { CreateRuleSchema, RuleDryRunSchema, RuleFiringSchema, RuleSchema, UpdateRuleSchema } from '../../shared/rules/rule-schemas';
import { createRule, deleteRule, listDryRuns, listFirings, listRules, readRule, updateRule } from '../../shared/rules/rule-store';
import type { ApiDeps } from '../deps';
import { requireHuman } from '../http/guards';
import { IdParams, uuidOr404 } from '../http/params';
import { defineRoute, type RouteDef } from '../http/route';

const BASE = '/api/v1/rules';
const ListQuery = z.strictObject({
  campaignId: z.uuid().optional(),
  limit: z.coerce.number().int().min(1).max(100).default(50),
});
const PageQuery = z.strictObject({ limit: z.coerce.number().int().min(1).max(100).default(20) });
const scope = { resource: 'rule' as const, param: 'id' };
const people = requireHuman('write automatic rules (a rule acts as its own agent, under a mandate a person grants)');
const human = { 403: { description: 'Delegated agents cannot write rules.' } };
/** Only activation asks for the approval permission: the 403 says so in words, as a condition of the body, not of the route. */
const activation = {
  403: { description: 'Delegated agents cannot write rules; setting mode active also needs the permission to approve agent actions.' },
};

/** A workspace's automatic rules over its campaigns (docs/agent.md, Rules). */
export function ruleRoutes({ db, config }: ApiDeps): RouteDef[] {
  return [
    defineRoute({
      method: 'post',
      path: BASE,
      operationId: 'createRule',
      summary:
        'Write an automatic rule over one campaign: a condition on its lines’ (or its) pacing, outlook or delivery, an action, and guardrails. It starts notify-only.',
      tags: ['rules'],
      access: 'bearer',
      scope: 'request',
      authorize: people,
      body: CreateRuleSchema,
      responses: {
        201: { description: 'The rule, notify-only.', schema: z.object({ rule: RuleSchema }) },
        400: { description: 'A bad condition, action or guardrail, or a receiving line not booked in the campaign.' },
        ...human,
        404: { description: 'No such campaign.' },
      },
      async handler({ principal, body }) {
        return { status: 201, body: { rule: await createRule(db, principal, body) } };
      },
    }),
    defineRoute({
      method: 'get',
      path: BASE,
      operationId: 'listRules',
      summary: "The workspace's rules (or one campaign's), newest first, each with its last firing and last dry run.",
      tags: ['rules'],
      access: 'bearer',
      scope: 'filtered',
      query: ListQuery,
      responses: { 200: { description: 'Rules.', schema: z.object({ rules: z.array(RuleSchema) }) } },
      async handler({ principal, query }) {
        return { status: 200, body: { rules: await listRules(db, principal, query) } };
      },
    }),
    defineRoute({
      method: 'get',
      path: `${BASE}/:id`,
      operationId: 'getRule',
      summary: 'One rule, with its mandate, last firing and last dry run.',
      tags: ['rules'],
      access: 'bearer',
      scope,
      params: IdParams,
      responses: { 200: { description: 'The rule.', schema: z.object({ rule: RuleSchema }) }, 404: { description: 'Not found.' } },
      async handler({ principal, params }) {
        return { status: 200, body: { rule: await readRule(db, principal, uuidOr404(params.id)) } };
      },
    }),
    defineRoute({
      method: 'patch',
      path: `${BASE}/:id`,
      operationId: 'updateRule',
      summary:
        'Change a rule at its version. Changing what it does puts it back to notify-only; `mode: active` with a mandate (agent:approve, after a dry run of this version) lets it act on its own.',
      tags: ['rules'],
      access: 'bearer',
      scope,
      authorize: people,
      params: IdParams,
      body: UpdateRuleSchema,
      responses: {
        200: { description: 'The rule as changed.', schema: z.object({ rule: RuleSchema }) },
        400: { description: 'A bad field, or a line action on a campaign subject.' },
        ...activation,
        404: { description: 'Not found.' },
        409: { description: 'A stale expectedVersion, no dry run of this version (dry_run_required), or a notify rule made active.' },
      },
      async handler({ principal, params, body }) {
        return { status: 200, body: { rule: await updateRule(db, principal, uuidOr404(params.id), body) } };
      },
    }),
    defineRoute({
      method: 'delete',
      path: `${BASE}/:id`,
      operationId: 'deleteRule',
      summary: 'Remove a rule: it stops firing and its mandate is withdrawn; its firings and dry runs stay on record.',
      tags: ['rules'],
      access: 'bearer',
      scope,
      authorize: people,
      params: IdParams,
      responses: {
        200: { description: 'Removed.', schema: z.object({ deleted: z.literal(true), id: z.uuid() }) },
        ...human,
        404: { description: 'Not found.' },
      },
      async handler({ principal, params }) {
        const id = uuidOr404(params.id);
        await deleteRule(db, principal, id);
        return { status: 200, body: { deleted: true, id } };
      },
    }),
    defineRoute({
      method: 'get',
      path: `${BASE}/:id/firings`,
      operationId: 'listRuleFirings',
      summary: "The rule's firings, newest first: what it saw, what it did or would have done, and with what money.",
      tags: ['rules'],
      access: 'bearer',
      scope,
      params: IdParams,
      query: PageQuery,
      responses: {
        200: { description: 'Firings.', schema: z.object({ firings: z.array(RuleFiringSchema) }) },
        404: { description: 'Not found.' },
      },
      async handler({ principal, params, query }) {
        return { status: 200, body: { firings: await listFirings(db, principal, uuidOr404(params.id), query.limit) } };
      },
    }),
    defineRoute({
      method: 'post',
      path: `${BASE}/:id/dry-runs`,
      operationId: 'dryRunRule',
      summary:
        "Run the rule over its campaign's own delivery so far, as if it had been active: what it would have done, on which day, with what money. Stored; a rule is made active only after a dry run of its version.",
      tags: ['rules'],
      access: 'bearer',
      scope,
      authorize: people,
      params: IdParams,
      body: DryRunRequestSchema,
      responses: {
        201: { description: 'The dry run.', schema: z.object({ dryRun: RuleDryRunSchema }) },
        ...human,
        404: { description: 'Not found.' },
        409: { description: 'The campaign has no running lines yet (no_history).' },
      },
      async handler({ principal, params, body }) {
        const dryRun = await dryRunRule(db, principal, uuidOr404(params.id), body, config.DELIVERY_PACING_TOLERANCE);
        return { status: 201, body: { dryRun } };
      },
    }),
    defineRoute({
      method: 'get',
      path: `${BASE}/:id/dry-runs`,
      operationId: 'listRuleDryRuns',
      summary: "The rule's dry runs, newest first.",
      tags: ['rules'],
      access: 'bearer',
      scope,
      params: IdParams,
      query: PageQuery,
      responses: {
        200: { description: 'Dry runs.', schema: z.object({ dryRuns: z.array(RuleDryRunSchema) }) },
        404: { description: 'Not found.' },
      },
      async handler({ principal, params, query }) {
        return { status: 200, body: { dryRuns: await listDryRuns(db, principal, uuidOr404(params.id), query.limit) } };
      },
    }),
  ];
}
