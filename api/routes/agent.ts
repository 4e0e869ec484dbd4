import { z } from 'zod';
import { requireHuman } from '../http/guards';
import { describeActions } from '../../shared/agent/actions';
import { AbandonSchema, ApproveSchema, PrepareSchema, abandonAction, approveAction, prepareAction } from '../../shared/agent/governance';
import { ResolveExecutionSchema, resolveExecution } from '../../shared/agent/execution';
import { EvidenceSchema, RunQuerySchema, readApproval, readRun, recordEvidence } from '../../shared/agent/runs';
import { MandateSchema, listMandates, putMandate } from '../../shared/agent/mandates';
import type { ApiDeps } from '../deps';
import { defineRoute } from '../http/route';
import { IdParams, PathId } from '../http/params';
import {
  ActionContractSchema,
  ApprovalEnvelope,
  EvidenceRecordSchema,
  MandateViewSchema,
  PreparedActionSchema,
  ResolvedStepEnvelope,
  RunEnvelope,
} from '../../shared/agent/agent-views';

const DECIDER_ERRORS = {
  403: { description: 'Needs a human with agent:approve; delegated agents cannot decide.' },
  404: { description: 'No such approval in this workspace.' },
  409: { description: 'Digest mismatch, or the approval is no longer pending.' },
};

/** The governed agent flow: contracts, prepare, human approval, abandon, resolve, runs and evidence, mandates. */
export function agentRoutes({ db }: ApiDeps) {
  return [
    defineRoute({
      method: 'get',
      path: '/api/v1/agent/actions',
      operationId: 'listAgentActions',
      summary: 'Agent action contracts: names, REST routes, parameter JSON Schemas and budget policies.',
      tags: ['agent'],
      access: 'bearer',
      scope: 'caller',
      responses: { 200: { description: 'The contracts.', schema: z.object({ actions: z.array(ActionContractSchema) }) } },
      async handler() {
        return { status: 200, body: { actions: describeActions() } };
      },
    }),
    defineRoute({
      method: 'post',
      path: '/api/v1/agent/actions/prepare',
      operationId: 'prepareAgentAction',
      summary: 'Prepare an exact action: normalised parameters, the server-computed commitment, and the digest a human approves.',
      tags: ['agent'],
      access: 'bearer',
      scope: 'request',
      body: PrepareSchema,
      // The action parameters are per action (their schemas are in the contracts), so not modeled here.
      completeness: 'unmodeled',
      responses: {
        201: { description: 'Prepared; awaiting human approval.', schema: PreparedActionSchema },
        403: { description: 'Outside the agent mandate.' },
        404: { description: 'The action names a resource that is not yours.' },
        409: { description: 'budgetMinor or currency differ from the server figure.' },
      },
      async handler({ principal, body }) {
        return { status: 201, body: await prepareAction(db, principal, body) };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/api/v1/agent/approvals/:id',
      operationId: 'getAgentApproval',
      summary: "An approval's status: pending, approved (with the execute step id to carry), or abandoned.",
      tags: ['agent'],
      access: 'bearer',
      scope: { resource: 'agent-approval', param: 'id' },
      params: IdParams,
      // The action parameters are per action (their schemas are in the contracts), so not modeled here.
      completeness: 'unmodeled',
      responses: {
        200: { description: 'The approval.', schema: ApprovalEnvelope },
        404: { description: 'No such approval in this workspace.' },
      },
      async handler({ principal, params }) {
        return { status: 200, body: await readApproval(db, principal, params.id) };
      },
    }),
    defineRoute({
      method: 'post',
      path: '/api/v1/agent/approvals/:id/approve',
      operationId: 'approveAgentAction',
      summary: 'A human approves the exact action behind expectedActionDigest; returns the execute step id the agent must carry.',
      tags: ['agent'],
      access: 'bearer',
      scope: { resource: 'agent-approval', param: 'id' },
      params: IdParams,
      body: ApproveSchema,
      // The action parameters are per action (their schemas are in the contracts), so not modeled here.
      completeness: 'unmodeled',
      responses: { 200: { description: 'Approved; one pending execute step.', schema: ApprovalEnvelope }, ...DECIDER_ERRORS },
      async handler({ principal, params, body }) {
        return { status: 200, body: await approveAction(db, principal, params.id, body.expectedActionDigest) };
      },
    }),
    defineRoute({
      method: 'post',
      path: '/api/v1/agent/approvals/:id/abandon',
      operationId: 'abandonAgentAction',
      summary: 'A human abandons an approval: it can no longer be approved or executed.',
      tags: ['agent'],
      access: 'bearer',
      scope: { resource: 'agent-approval', param: 'id' },
      params: IdParams,
      body: AbandonSchema,
      // The action parameters are per action (their schemas are in the contracts), so not modeled here.
      completeness: 'unmodeled',
      responses: { 200: { description: 'Abandoned.', schema: ApprovalEnvelope }, ...DECIDER_ERRORS },
      async handler({ principal, params, body }) {
        return { status: 200, body: await abandonAction(db, principal, params.id, body) };
      },
    }),
    defineRoute({
      method: 'post',
      path: '/api/v1/agent/steps/:id/execution/resolve',
      operationId: 'resolveAgentExecution',
      summary: 'Record whether an execution of unknown outcome was applied; once.',
      tags: ['agent'],
      access: 'bearer',
      scope: { resource: 'agent-step', param: 'id' },
      params: IdParams,
      body: ResolveExecutionSchema,
      responses: {
        200: { description: 'Resolved.', schema: ResolvedStepEnvelope },
        404: { description: 'No such step.' },
        409: { description: 'Digest mismatch, or not unresolved.' },
      },
      async handler({ principal, params, body }) {
        return { status: 200, body: await resolveExecution(db, principal, params.id, body) };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/api/v1/agent/runs/:id',
      operationId: 'getAgentRun',
      summary: 'A run with its steps, approvals, receipts and evidence.',
      tags: ['agent'],
      access: 'bearer',
      scope: { resource: 'agent-run', param: 'id' },
      params: IdParams,
      query: RunQuerySchema,
      // The action parameters are per action (their schemas are in the contracts), so not modeled here.
      completeness: 'unmodeled',
      responses: { 200: { description: 'The run.', schema: RunEnvelope }, 404: { description: 'No such run.' } },
      async handler({ principal, params, query }) {
        return { status: 200, body: await readRun(db, principal, params.id, query.detailLimit) };
      },
    }),
    defineRoute({
      method: 'post',
      path: '/api/v1/agent/runs/:id/evidence',
      operationId: 'recordAgentEvidence',
      summary: 'Record evidence on a run, optionally tied to one of its steps.',
      tags: ['agent'],
      access: 'bearer',
      scope: { resource: 'agent-run', param: 'id' },
      params: IdParams,
      body: EvidenceSchema,
      responses: {
        201: { description: 'Recorded.', schema: z.object({ evidence: EvidenceRecordSchema }) },
        404: { description: 'No such run, or the step is not in it.' },
      },
      async handler({ principal, params, body }) {
        return { status: 201, body: await recordEvidence(db, principal, params.id, body) };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/api/v1/agent/mandates',
      operationId: 'listAgentMandates',
      summary: "The workspace's agent mandates: allowed actions and budget ceilings.",
      tags: ['agent'],
      access: 'bearer',
      scope: 'caller',
      responses: { 200: { description: 'Mandates.', schema: z.object({ mandates: z.array(MandateViewSchema) }) } },
      async handler({ principal }) {
        return { status: 200, body: { mandates: await listMandates(db, principal.advertiserId) } };
      },
    }),
    defineRoute({
      method: 'put',
      path: '/api/v1/agent/mandates/:agentClientId',
      operationId: 'putAgentMandate',
      summary: 'Set what an agent may propose: allowed actions and a budget ceiling (human with agent:approve).',
      tags: ['agent'],
      access: 'bearer',
      scope: 'caller',
      params: z.strictObject({ agentClientId: PathId }),
      body: MandateSchema,
      responses: {
        200: { description: 'The mandate.', schema: z.object({ mandate: MandateViewSchema }) },
        403: { description: 'Needs a human with agent:approve.' },
      },
      authorize: requireHuman('set agent mandates', 'agent:approve'),
      async handler({ principal, params, body }) {
        return { status: 200, body: { mandate: await putMandate(db, principal, params.agentClientId, body) } };
      },
    }),
  ];
}
