import { z } from 'zod';
import { DateTimeSchema, FreeFormSchema, Sha256HexSchema } from '../wire';
import { ACTION_TABLE, BUDGET_POLICIES, CurrencySchema, type ActionName } from './actions';

/** Response shapes of the governed agent flow. */
export const ActionContractSchema = z
  .object({
    name: z.enum(Object.keys(ACTION_TABLE) as [ActionName, ...ActionName[]]),
    method: z.literal('POST'),
    route: z.string().min(1),
    parameters: FreeFormSchema.meta({ description: 'The JSON Schema of the action parameters.' }),
    budgetPolicy: z.enum(BUDGET_POLICIES),
    idempotency: z.enum(['governed-execution-receipt', 'required']),
    exactApprovalRequired: z.literal(true),
  })
  .meta({ id: 'AgentActionContract' });

export const CommitmentSchema = z
  .object({
    budgetMinor: z.number().int().min(0),
    currency: CurrencySchema,
    policy: z.enum(BUDGET_POLICIES),
    incrementalReservationMinor: z.number().int().min(0),
    description: z.string(),
  })
  .meta({ id: 'AgentCommitment' });

export const NormalisedActionSchema = z
  .object({ name: z.string().min(1), parameters: FreeFormSchema, budgetMinor: z.number().int().min(0), currency: CurrencySchema })
  .meta({ id: 'AgentAction' });

export const PreparedActionSchema = z
  .object({
    runId: z.string().min(1),
    approvalId: z.string().min(1),
    prepareStepId: z.string().min(1),
    actionDigest: Sha256HexSchema,
    action: NormalisedActionSchema,
    commitment: CommitmentSchema,
    execute: z.object({ method: z.literal('POST'), route: z.string().min(1), idempotency: z.string().min(1) }),
    status: z.string().min(1),
  })
  .meta({ id: 'PreparedAgentAction' });

export const ApprovalSchema = z
  .object({
    id: z.string().min(1),
    runId: z.string().min(1),
    actionName: z.string().min(1),
    action: NormalisedActionSchema,
    actionDigest: Sha256HexSchema,
    commitment: CommitmentSchema,
    status: z.enum(['pending', 'approved', 'abandoned']),
    agentClientId: z.string().nullable(),
    decidedBy: z.string().nullable(),
    decidedAt: DateTimeSchema.nullable(),
    note: z.string().nullable(),
    executeStepId: z.string().nullable(),
    createdAt: DateTimeSchema,
  })
  .meta({ id: 'AgentApproval' });

export const ApprovalEnvelope = z
  .object({
    approval: ApprovalSchema,
    executeStep: z.object({ id: z.string().min(1), status: z.string().min(1), actionDigest: Sha256HexSchema }).optional(),
  })
  .meta({ id: 'AgentApprovalEnvelope' });

const ResolutionSchema = z.object({
  outcome: z.enum(['applied', 'not-applied']),
  note: z.string(),
  resolvedBy: z.string(),
  resolvedAt: DateTimeSchema,
});

export const ResolvedStepEnvelope = z
  .object({
    step: z.object({ id: z.string().min(1), status: z.string().min(1), actionDigest: Sha256HexSchema, resolution: ResolutionSchema }),
  })
  .meta({ id: 'ResolvedAgentStep' });

export const EvidenceRecordSchema = z
  .object({
    id: z.string().min(1),
    kind: z.string().min(1),
    source: z.string().min(1),
    content: FreeFormSchema,
    observedAt: DateTimeSchema.nullable(),
    stepId: z.string().nullable(),
    recordedBy: z.string().min(1),
    createdAt: DateTimeSchema,
  })
  .meta({ id: 'AgentEvidence' });

export const RunEnvelope = z
  .object({
    run: z.object({
      id: z.string().min(1),
      actionName: z.string().min(1),
      userId: z.string().min(1),
      agentClientId: z.string().nullable(),
      createdAt: DateTimeSchema,
      steps: z.array(
        z.object({
          id: z.string().min(1),
          kind: z.string().min(1),
          status: z.string().min(1),
          actionName: z.string().min(1),
          actionDigest: Sha256HexSchema,
          approvalId: z.string().nullable(),
          resolution: ResolutionSchema.nullable(),
          createdAt: DateTimeSchema,
          startedAt: DateTimeSchema.nullable(),
          finishedAt: DateTimeSchema.nullable(),
        }),
      ),
      approvals: z.array(ApprovalSchema),
      receipts: z.array(z.object({ stepId: z.string().min(1), status: z.number().int(), body: z.unknown(), createdAt: DateTimeSchema })),
      evidence: z.array(EvidenceRecordSchema),
      truncated: z.object({ steps: z.boolean(), approvals: z.boolean(), receipts: z.boolean(), evidence: z.boolean() }),
    }),
  })
  .meta({ id: 'AgentRunEnvelope' });

export const MandateViewSchema = z
  .object({
    agentClientId: z.string().min(1),
    allowedActions: z.array(z.string().min(1)),
    budgetCeilingMinor: z.number().int().min(0),
    currency: CurrencySchema,
  })
  .meta({ id: 'AgentMandateView' });
