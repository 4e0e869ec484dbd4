import { isUuid } from '../ids';
import type { Knex } from 'knex';
import { recordEvent } from '../events/record';
import { z } from 'zod';
import { badRequest, conflict, forbidden, notFound } from '../errors';
import { callerId, type Principal } from '../auth/principal';
import { findAction } from './actions';
import { actionDigest, DigestSchema, normaliseAction } from './governance';
import { journal } from './journal';
import { checkMandate } from './mandates';
import { canonicalJson } from '../digest';

export const STEP_HEADER = 'x-flightdeck-agent-step-id';
export const DIGEST_HEADER = 'x-flightdeck-agent-action-digest';

export const ResolveExecutionSchema = z
  .strictObject({ expectedActionDigest: DigestSchema, outcome: z.enum(['applied', 'not-applied']), note: z.string().min(1).max(2000) })
  .meta({ id: 'ResolveAgentExecution' });

/** A replay carries the receipt's body exactly as it was first sent (JSON text, or null for none). */
export type Begin = { kind: 'execute'; stepId: string } | { kind: 'replay'; status: number; json: string | null };

const invalidBinding = (detail: string) => forbidden(detail, 'execution_binding_invalid');
const RECEIPT_WAIT_MS = 5000;
/** An execution claimed this long ago without an outcome is taken to have died mid-flight. */
const EXECUTING_STALE_MS = 60_000;

async function receiptOf(db: Knex, stepId: string) {
  return db('agent_receipts').where({ step_id: stepId }).first();
}

/**
 * Checks a delegated agent's request against the step a human approved: the headers, the
 * agent, the action, and the digest recomputed from the real request and the server's money.
 * Then claims the step, or answers with the recorded receipt when it already ran.
 */
export async function beginGovernedExecution(
  db: Knex,
  p: Principal,
  actionName: string,
  request: { params: Record<string, string>; body: unknown },
  headers: Record<string, string | string[] | undefined>,
): Promise<Begin> {
  const stepId = headers[STEP_HEADER];
  const digest = headers[DIGEST_HEADER];
  if (typeof stepId !== 'string' || typeof digest !== 'string' || !stepId || !digest) {
    throw forbidden(
      `A delegated agent must send ${STEP_HEADER} and ${DIGEST_HEADER} from a human-approved action.`,
      'execution_binding_required',
    );
  }
  if (stepId.length > 128 || !DigestSchema.safeParse(digest).success) {
    throw badRequest(`${DIGEST_HEADER} must be 64 lowercase hex characters and ${STEP_HEADER} at most 128 characters.`);
  }
  const step = isUuid(stepId)
    ? await db('agent_steps').where({ id: stepId, advertiser_id: p.advertiserId, kind: 'execute' }).first()
    : undefined;
  if (!step) throw invalidBinding('No approved execute step with that id exists for this workspace.');
  if (step.agent_client_id !== p.agentClientId || step.user_id !== p.userId)
    throw invalidBinding('The step was approved for another agent.');
  if (step.action_name !== actionName) throw invalidBinding(`The step was approved for ${step.action_name}, not ${actionName}.`);
  if (step.action_digest !== digest) throw invalidBinding('The digest header is not the approved action digest.');

  const contract = findAction(actionName)!;
  if (step.status === 'pending') {
    // The digest of what this request would actually do, with today's server-side money.
    const { action, commitment } = await normaliseAction(db, p, contract, contract.fromRequest(request), 'request').catch((err) => {
      if (err && typeof err === 'object' && 'status' in err && (err as { status: number }).status === 404) throw err;
      throw conflict('This request is not the approved action.', 'action_changed', 'terminal');
    });
    if (actionDigest(action) !== step.action_digest) {
      throw conflict('This request is not the approved action; nothing was executed.', 'action_changed', 'terminal');
    }
    // The mandate bounds what an agent executes as well as what it proposes: a mandate narrowed since approval wins.
    await checkMandate(db, p, actionName, commitment);
    const claimed = await db('agent_steps')
      .where({ id: step.id, status: 'pending' })
      .update({ status: 'executing', started_at: db.fn.now() });
    if (claimed === 1) return { kind: 'execute', stepId: step.id };
  }

  // A replay must be the same request. Its money is not recomputed: it may have moved on
  // because of the execution itself (a study approval is used by its draft).
  const approved = await db('agent_approvals').where({ id: step.approval_id }).first('action');
  const parsed = contract.parameters.safeParse(contract.fromRequest(request));
  if (!parsed.success || canonicalJson(parsed.data) !== canonicalJson(approved.action.parameters)) {
    throw conflict('This request is not the approved action; nothing was executed.', 'action_changed', 'terminal');
  }

  // Already claimed: a replay. Return the receipt, waiting briefly if the first call is still running.
  const deadline = Date.now() + RECEIPT_WAIT_MS;
  for (;;) {
    const receipt = await receiptOf(db, step.id);
    if (receipt) return { kind: 'replay', status: receipt.response_status, json: receipt.response_body };
    const now = await db('agent_steps').where({ id: step.id }).first('status');
    switch (now.status) {
      case 'abandoned':
        throw conflict('This approval was abandoned; it cannot be executed.', 'approval_abandoned', 'terminal');
      case 'unknown':
        throw conflict(
          'The outcome of this execution is unknown. Inspect state and resolve the step; it will not run again.',
          'execution_outcome_unknown',
          'terminal',
        );
      case 'resolved':
        throw conflict('This execution was resolved by a person; it will not run again.', 'execution_resolved', 'terminal');
    }
    if (Date.now() > deadline)
      throw conflict('This step is executing now; ask again for its receipt shortly.', 'execution_in_flight', 'transient');
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** Records the definite outcome as the step's receipt, or marks it unknown (crash, 5xx): never to run again. */
export async function finishGovernedExecution(
  db: Knex,
  p: Principal,
  stepId: string,
  outcome: { status: number; json: string | null } | 'unknown',
): Promise<void> {
  await db.transaction(async (trx) => {
    const step = await trx('agent_steps').where({ id: stepId }).forUpdate().first();
    if (outcome === 'unknown') {
      const n = await trx('agent_steps')
        .where({ id: stepId, status: 'executing' })
        .update({ status: 'unknown', finished_at: trx.fn.now() });
      if (n) {
        await recordEvent(trx, {
          workspaceId: step.advertiser_id,
          type: 'agent.step.unknown',
          subjectId: stepId,
          subjectVersion: 1,
          body: { stepId, runId: step.run_id, approvalId: step.approval_id, action: step.action_name },
        });
      }
      await journal(trx, {
        advertiserId: p.advertiserId,
        runId: step.run_id,
        approvalId: step.approval_id,
        type: 'action.outcome-unknown',
        entry: { stepId },
        actorId: p.userId,
        by: p,
      });
      return;
    }
    await trx('agent_receipts').insert({
      step_id: stepId,
      advertiser_id: p.advertiserId,
      response_status: outcome.status,
      response_body: outcome.json,
    });
    await trx('agent_steps')
      .where({ id: stepId, status: 'executing' })
      .update({ status: outcome.status < 400 ? 'succeeded' : 'failed', finished_at: trx.fn.now() });
    await journal(trx, {
      advertiserId: p.advertiserId,
      runId: step.run_id,
      approvalId: step.approval_id,
      type: 'action.executed',
      entry: { stepId, status: outcome.status },
      actorId: p.agentClientId ? `${p.userId}|agent:${p.agentClientId}` : p.userId,
      by: p,
    });
  });
}

/**
 * Records what became of an execution whose outcome was unknown: applied or not, once. A person
 * may resolve any step of the workspace; a delegated agent only a step it executed itself, for
 * the same user, with the digest bound to it.
 */
export async function resolveExecution(db: Knex, p: Principal, stepId: string, body: z.infer<typeof ResolveExecutionSchema>) {
  if (!isUuid(stepId)) throw notFound();
  return db.transaction(async (trx) => {
    const step = await trx('agent_steps').where({ id: stepId, advertiser_id: p.advertiserId, kind: 'execute' }).forUpdate().first();
    if (!step) throw notFound();
    if (p.agentClientId && (step.agent_client_id !== p.agentClientId || step.user_id !== p.userId)) {
      throw forbidden('A delegated agent can resolve only the executions it ran itself.', 'not_own_step');
    }
    if (step.action_digest !== body.expectedActionDigest)
      throw conflict('expectedActionDigest is not the digest of this step.', 'digest_mismatch');
    const stale = step.status === 'executing' && step.started_at && Date.now() - (step.started_at as Date).getTime() > EXECUTING_STALE_MS;
    if (step.status === 'executing' && !stale) {
      throw conflict(
        'This execution may still be running; resolve it once it has been stuck for a minute.',
        'execution_in_flight',
        'transient',
      );
    }
    if (!['unknown', 'executing'].includes(step.status)) {
      throw conflict(
        `Only an execution whose outcome is unknown can be resolved; this one is ${step.status}.`,
        'not_unresolved',
        'terminal',
      );
    }
    const resolution = { outcome: body.outcome, note: body.note, resolvedBy: callerId(p), resolvedAt: new Date().toISOString() };
    await trx('agent_steps')
      .where({ id: stepId })
      .update({ status: 'resolved', resolution: JSON.stringify(resolution), finished_at: trx.fn.now() });
    await journal(trx, {
      advertiserId: p.advertiserId,
      runId: step.run_id,
      approvalId: step.approval_id,
      type: 'action.resolved',
      entry: resolution,
      actorId: p.userId,
      by: p,
    });
    return { step: { id: stepId, status: 'resolved' as const, actionDigest: step.action_digest as string, resolution } };
  });
}
