import { isUuid } from '../ids';
import { assertHuman } from '../auth/guards';
import { assertMayApproveAction } from '../auth/spend-authority';
import { randomUUID } from 'node:crypto';
import type { Knex } from 'knex';
import { recordEvent } from '../events/record';
import { z } from 'zod';
import { badRequest, conflict, forbidden, notFound } from '../errors';
import { type Principal } from '../auth/principal';
import { digestOf } from '../digest';
import { CurrencySchema, findAction, type ActionContract, type Commitment } from './actions';
import { checkMandate } from './mandates';
import { journal, redactForJournal } from './journal';

export const PrepareSchema = z
  .strictObject({
    name: z.string().min(1).max(120),
    parameters: z.record(z.string(), z.unknown()),
    budgetMinor: z.number().int().min(0).max(1_900_000_000),
    currency: CurrencySchema,
  })
  .meta({ id: 'PrepareAgentAction' });
export type PrepareRequest = z.infer<typeof PrepareSchema>;

export const DigestSchema = z.string().regex(/^[a-f0-9]{64}$/);
export const ApproveSchema = z.strictObject({ expectedActionDigest: DigestSchema }).meta({ id: 'ApproveAgentAction' });
export const AbandonSchema = z
  .strictObject({ expectedActionDigest: DigestSchema, note: z.string().min(1).max(2000) })
  .meta({ id: 'AbandonAgentAction' });

export interface NormalisedAction {
  name: string;
  parameters: Record<string, unknown>;
  budgetMinor: number;
  currency: Commitment['currency'];
}

/** The digest a human approves: SHA-256 of the RFC 8785 canonical JSON of the normalised action. */
export const actionDigest = (a: NormalisedAction) =>
  digestOf({ name: a.name, parameters: a.parameters, budgetMinor: a.budgetMinor, currency: a.currency });

/** Validates parameters against the action's contract and computes the server's money for it. */
export async function normaliseAction(
  db: Knex,
  p: Principal,
  contract: ActionContract,
  rawParameters: unknown,
  location = 'body.parameters',
): Promise<{ action: NormalisedAction; commitment: Commitment }> {
  const parsed = contract.parameters.safeParse(rawParameters);
  if (!parsed.success) {
    const errors = parsed.error.issues.map((i) => ({
      path: [location, ...i.path.map(String)].join('.'),
      message: i.message,
      code: i.code,
    }));
    throw badRequest(`The parameters do not fit ${contract.name}: ${errors.map((e) => `${e.path}: ${e.message}`).join('; ')}`, errors);
  }
  const commitment = await contract.commitment(db, p, parsed.data);
  return {
    action: { name: contract.name, parameters: parsed.data, budgetMinor: commitment.budgetMinor, currency: commitment.currency },
    commitment,
  };
}

/**
 * An agent (or a person) prepares an exact action. Money is the server's figure: a
 * budgetMinor or currency that differs from it is refused, never trusted.
 */
export async function prepareAction(db: Knex, p: Principal, body: PrepareRequest) {
  const contract = findAction(body.name);
  if (!contract)
    throw badRequest(
      `Unknown action ${body.name}; see GET /api/v1/agent/actions.`,
      [{ path: 'body.name', message: 'unknown action' }],
      'unknown_action',
    );
  const { action, commitment } = await normaliseAction(db, p, contract, body.parameters);
  if (body.budgetMinor !== commitment.budgetMinor || body.currency !== commitment.currency) {
    throw conflict(
      `This action commits ${commitment.budgetMinor} ${commitment.currency} minor units (${commitment.policy}); the request said ${body.budgetMinor} ${body.currency}. Prepare it with the server's figure.`,
      'commitment_mismatch',
    );
  }
  await checkMandate(db, p, contract.name, commitment);
  const digest = actionDigest(action);
  const runId = randomUUID();
  const approvalId = randomUUID();
  const prepareStepId = randomUUID();
  const actorId = p.agentClientId ? `${p.userId}|agent:${p.agentClientId}` : p.userId;
  await db.transaction(async (trx) => {
    await trx('agent_runs').insert({
      id: runId,
      advertiser_id: p.advertiserId,
      user_id: p.userId,
      agent_client_id: p.agentClientId,
      action_name: contract.name,
    });
    await trx('agent_steps').insert({
      id: prepareStepId,
      run_id: runId,
      advertiser_id: p.advertiserId,
      kind: 'prepare',
      status: 'completed',
      approval_id: approvalId,
      action_name: contract.name,
      action_digest: digest,
      agent_client_id: p.agentClientId,
      user_id: p.userId,
      finished_at: trx.fn.now(),
    });
    await trx('agent_approvals').insert({
      id: approvalId,
      run_id: runId,
      advertiser_id: p.advertiserId,
      user_id: p.userId,
      agent_client_id: p.agentClientId,
      action_name: contract.name,
      action: JSON.stringify(action),
      action_digest: digest,
      commitment: JSON.stringify(commitment),
      status: 'pending',
    });
    await recordEvent(trx, {
      workspaceId: p.advertiserId,
      type: 'agent.approval.pending',
      subjectId: approvalId,
      subjectVersion: 1,
      body: { approvalId, runId, action: contract.name, actionDigest: digest },
    });
    await journal(trx, {
      advertiserId: p.advertiserId,
      runId,
      approvalId,
      type: 'action.prepared',
      entry: { action, actionDigest: digest, commitment },
      actorId,
      by: p,
    });
  });
  return {
    runId,
    approvalId,
    prepareStepId,
    actionDigest: digest,
    action: redactForJournal(action),
    commitment,
    execute: { method: contract.method, route: contract.route, idempotency: contract.idempotency },
    status: 'pending' as const,
  };
}

function requireApprover(p: Principal): void {
  assertHuman(p, 'decide on agent actions', 'agent:approve');
}

async function lockApproval(trx: Knex, p: Principal, id: string) {
  if (!isUuid(id)) throw notFound();
  const row = await trx('agent_approvals').where({ id, advertiser_id: p.advertiserId }).forUpdate().first();
  if (!row) throw notFound();
  return row;
}

export function approvalView(row: Record<string, unknown>) {
  return {
    id: row.id,
    runId: row.run_id,
    actionName: row.action_name,
    action: redactForJournal(row.action),
    actionDigest: row.action_digest,
    commitment: row.commitment,
    status: row.status,
    agentClientId: row.agent_client_id,
    decidedBy: row.decided_by ?? null,
    decidedAt: row.decided_at ? (row.decided_at as Date).toISOString() : null,
    note: row.note ?? null,
    executeStepId: row.execute_step_id ?? null,
    createdAt: (row.created_at as Date).toISOString(),
  };
}

/** A human approves exactly the action behind a digest; one pending execute step is bound to it. Used once. */
/** A person's decision on an approval, told to subscribers in its transaction. */
const approvalDecided = (trx: Knex, row: { id: string; advertiser_id: string; run_id: string; action_name: string }, status: string) =>
  recordEvent(trx, {
    workspaceId: row.advertiser_id,
    type: 'agent.approval.decided',
    subjectId: row.id,
    subjectVersion: 2,
    body: { approvalId: row.id, runId: row.run_id, action: row.action_name, status },
  });

export async function approveAction(db: Knex, p: Principal, approvalId: string, expectedDigest: string) {
  requireApprover(p);
  return db.transaction(async (trx) => {
    const row = await lockApproval(trx, p, approvalId);
    assertMayApproveAction(p, row.action_name);
    if (row.action_digest !== expectedDigest) throw conflict('expectedActionDigest is not the digest of this approval.', 'digest_mismatch');
    return decideApproved(trx, p, row, { decidedBy: p.userId, note: null });
  });
}

/**
 * An automatic rule's own action, approved by the standing mandate a person granted its agent
 * (docs/agent.md, Rules): the same checks, execute step, event and journal as a person's
 * approval, with the mandate's grantor as the one who decided. Outside the mandate it throws the
 * mandate's 403 and nothing is approved.
 */
export async function approveUnderMandate(db: Knex, agent: Principal, approvalId: string) {
  if (!agent.agentClientId) throw new Error('approveUnderMandate: only an agent acts under a standing mandate');
  return db.transaction(async (trx) => {
    const row = await lockApproval(trx, agent, approvalId);
    if (row.agent_client_id !== agent.agentClientId) throw forbidden('The approval was prepared by another agent.', 'not_own_approval');
    const mandate = await trx('agent_mandates')
      .where({ advertiser_id: agent.advertiserId, agent_client_id: agent.agentClientId })
      .first('granted_by');
    if (!mandate) throw forbidden(`Agent ${agent.agentClientId} has no mandate in this workspace.`, 'mandate_missing');
    return decideApproved(trx, agent, row, {
      decidedBy: String(mandate.granted_by),
      note: `Approved by the standing mandate of ${agent.agentClientId}, granted by ${String(mandate.granted_by)}.`,
    });
  });
}

async function decideApproved(
  trx: Knex,
  p: Principal,
  row: Awaited<ReturnType<typeof lockApproval>>,
  decision: { decidedBy: string; note: string | null },
) {
  if (row.status !== 'pending')
    throw conflict(`This approval is ${row.status}; an approval is used once.`, 'approval_not_pending', 'terminal');
  // The world may have moved since preparation (a campaign's commitment, say): approve only what is still true.
  const contract = findAction(row.action_name)!;
  const { action, commitment } = await normaliseAction(trx, p, contract, row.action.parameters).catch(() => {
    throw conflict('The action no longer matches what was prepared. Prepare it again.', 'action_changed', 'terminal');
  });
  if (actionDigest(action) !== row.action_digest)
    throw conflict('The action no longer matches what was prepared. Prepare it again.', 'action_changed', 'terminal');
  // The agent's mandate may have narrowed since it prepared this.
  if (row.agent_client_id) await checkMandate(trx, { ...p, agentClientId: row.agent_client_id }, contract.name, commitment);

  const stepId = randomUUID();
  await trx('agent_steps').insert({
    id: stepId,
    run_id: row.run_id,
    advertiser_id: p.advertiserId,
    kind: 'execute',
    status: 'pending',
    approval_id: row.id,
    action_name: row.action_name,
    action_digest: row.action_digest,
    agent_client_id: row.agent_client_id,
    user_id: row.user_id,
  });
  const [updated] = await trx('agent_approvals')
    .where({ id: row.id })
    .update({
      status: 'approved',
      decided_by: decision.decidedBy,
      decided_at: trx.fn.now(),
      execute_step_id: stepId,
      ...(decision.note ? { note: decision.note } : {}),
    })
    .returning('*');
  await approvalDecided(trx, updated, 'approved');
  await journal(trx, {
    advertiserId: p.advertiserId,
    runId: row.run_id,
    approvalId: row.id,
    type: 'action.approved',
    entry: { actionDigest: row.action_digest, executeStepId: stepId, ...(decision.note ? { standingMandate: p.agentClientId } : {}) },
    actorId: decision.decidedBy,
    by: p,
  });
  return {
    approval: approvalView(updated),
    executeStep: { id: stepId, status: 'pending' as const, actionDigest: row.action_digest as string },
  };
}

/** A human abandons an approval (before its step runs): it can no longer be approved or executed. */
export async function abandonAction(db: Knex, p: Principal, approvalId: string, body: z.infer<typeof AbandonSchema>) {
  requireApprover(p);
  return db.transaction(async (trx) => {
    const row = await lockApproval(trx, p, approvalId);
    if (row.action_digest !== body.expectedActionDigest)
      throw conflict('expectedActionDigest is not the digest of this approval.', 'digest_mismatch');
    if (row.status === 'abandoned') throw conflict('This approval is already abandoned.', 'approval_not_pending', 'terminal');
    if (row.execute_step_id) {
      const n = await trx('agent_steps')
        .where({ id: row.execute_step_id, status: 'pending' })
        .update({ status: 'abandoned', finished_at: trx.fn.now() });
      if (n === 0)
        throw conflict('The approved action has already been executed; it can no longer be abandoned.', 'already_executed', 'terminal');
    }
    const [updated] = await trx('agent_approvals')
      .where({ id: row.id })
      .update({ status: 'abandoned', decided_by: p.userId, decided_at: trx.fn.now(), note: body.note })
      .returning('*');
    await approvalDecided(trx, updated, 'abandoned');
    await journal(trx, {
      advertiserId: p.advertiserId,
      runId: row.run_id,
      approvalId: row.id,
      type: 'action.abandoned',
      entry: { note: body.note },
      actorId: p.userId,
      by: p,
    });
    return { approval: approvalView(updated) };
  });
}
