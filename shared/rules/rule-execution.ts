import type { Knex } from 'knex';
import { actorOf } from '../auth/actor';
import { CHANNELS } from '../auth/products';
import type { Principal } from '../auth/principal';
import { ACTION_TABLE, type ActionName } from '../agent/actions';
import { beginGovernedExecution, DIGEST_HEADER, finishGovernedExecution, STEP_HEADER } from '../agent/execution';
import { approveUnderMandate, normaliseAction, prepareAction } from '../agent/governance';
import { amendCampaign } from '../bookings/amendments';
import { openBookingOf } from '../bookings/campaign-control';
import { controlLine } from '../bookings/lines/control';
import { toMinor } from '../db/knex';
import { Problem } from '../errors';
import type { RulePlanned } from './rule-schemas';
import { governedActionOf, ruleAgentId, type RuleRow } from './rule-store';

/**
 * A rule acts as its own agent (`rule-<id>`), for the person who made it active: the mandate
 * that person granted bounds it, and its actions carry their name in the audit.
 */
export function rulePrincipal(rule: Pick<RuleRow, 'id' | 'advertiser_id' | 'enabled_by'>): Principal {
  if (!rule.enabled_by) throw new Error('rulePrincipal: an active rule names the person who enabled it');
  return {
    userId: rule.enabled_by,
    advertiserId: rule.advertiser_id,
    product: 'flightdeck',
    channels: [...CHANNELS],
    permissions: [],
    agentClientId: ruleAgentId(rule.id),
    via: 'rules',
  };
}

export interface GovernedRequest {
  name: ActionName;
  parameters: Record<string, unknown>;
  params: Record<string, string>;
  body: Record<string, unknown>;
}

/** The exact governed action a planned firing is: its parameters as the REST request would carry them. */
export async function governedRequest(db: Knex, p: Principal, rule: RuleRow, planned: RulePlanned): Promise<GovernedRequest> {
  const name = governedActionOf(rule.action);
  if (!name || !planned.lineId) throw new Error('governedRequest: a notification has no action to run');
  const note = `Rule "${rule.name}" (${rule.id}): ${planned.action} on ${planned.lineId}, its condition seen through ${planned.through}.`;
  if (name === 'campaign.amend') {
    const bookingId = await openBookingOf(db, p, rule.campaign_id);
    const booking = await db('bookings').where({ id: bookingId }).first('version');
    const budgets = new Map(
      (
        (await db('booking_lines')
          .where({ booking_id: bookingId })
          .whereIn('id', [planned.lineId, planned.toLineId!])
          .select('id', 'budget_minor')) as Array<{ id: string; budget_minor: string }>
      ).map((l) => [l.id, toMinor(l.budget_minor)]),
    );
    const amount = planned.amountMinor!;
    const body = {
      expectedVersion: booking.version as number,
      lines: [
        { lineId: planned.lineId, budgetMinor: budgets.get(planned.lineId)! - amount },
        { lineId: planned.toLineId!, budgetMinor: budgets.get(planned.toLineId!)! + amount },
      ],
      note,
    };
    return { name, parameters: { campaignId: rule.campaign_id, ...body }, params: { id: rule.campaign_id }, body };
  }
  const line = await db('booking_lines').where({ id: planned.lineId }).first('booking_id', 'version');
  const body = { expectedVersion: line.version as number, note };
  return {
    name,
    parameters: { bookingId: line.booking_id, lineId: planned.lineId, ...body },
    params: { bookingId: line.booking_id, lineId: planned.lineId },
    body,
  };
}

export interface RunOptions {
  /** DELIVERY_POLL_EVERY_MS, for an amendment's spend figures. */
  pollEveryMs: number;
}

/** The domain call a governed route makes for the action, in process. */
async function perform(db: Knex, p: Principal, req: GovernedRequest, opts: RunOptions): Promise<{ status: number; body: unknown }> {
  const actor = actorOf(p);
  if (req.name === 'campaign.amend') {
    const { amendment } = await amendCampaign(db, p, actor, req.params.id!, req.body as never, { pollEveryMs: opts.pollEveryMs });
    return { status: 202, body: { amendment: { id: amendment.id, status: amendment.status } } };
  }
  const control = req.name === 'line.pause' ? 'pause' : 'resume';
  const { line } = await controlLine(
    db,
    { bookingId: req.params.bookingId!, lineId: req.params.lineId! },
    control,
    actor,
    req.body as { expectedVersion: number; note?: string },
  );
  return { status: 202, body: { line: { id: line.id, status: line.status, version: line.version } } };
}

/**
 * Runs an approved step as the governed routes do: bound to its step and digest, at most once,
 * its outcome kept as the step's receipt. Returns the receipt's status.
 */
export async function executeStep(
  db: Knex,
  p: Principal,
  req: GovernedRequest,
  step: { id: string; actionDigest: string },
  opts: RunOptions,
): Promise<{ status: number; detail: string | null }> {
  const begun = await beginGovernedExecution(
    db,
    p,
    req.name,
    { params: req.params, body: req.body },
    { [STEP_HEADER]: step.id, [DIGEST_HEADER]: step.actionDigest },
  );
  if (begun.kind === 'replay') return { status: begun.status, detail: 'already executed: the receipt stands' };
  try {
    const result = await perform(db, p, req, opts);
    await finishGovernedExecution(db, p, begun.stepId, { status: result.status, json: JSON.stringify(result.body) });
    return { status: result.status, detail: null };
  } catch (err) {
    if (err instanceof Problem && err.status < 500) {
      const json = JSON.stringify({ status: err.status, code: err.code, detail: err.detail });
      await finishGovernedExecution(db, p, begun.stepId, { status: err.status, json });
      return { status: err.status, detail: `${err.code}: ${err.detail}` };
    }
    await finishGovernedExecution(db, p, begun.stepId, 'unknown').catch(() => undefined);
    throw err;
  }
}

export type ActOutcome =
  | { outcome: 'executed' | 'failed'; approvalId: string; stepId: string; detail: string | null }
  | { outcome: 'awaiting-approval'; approvalId: string; stepId: null; detail: string };

/**
 * A firing's action, the way an agent's is carried out: prepared (the server's money, the
 * digest), approved by the rule's standing mandate, executed against its step. An action its
 * mandate does not cover is prepared for a person instead, in the name of the person who
 * enabled the rule, and waits for their approval.
 */
export async function actAsRule(db: Knex, rule: RuleRow, planned: RulePlanned, opts: RunOptions): Promise<ActOutcome> {
  const agent = rulePrincipal(rule);
  const req = await governedRequest(db, agent, rule, planned);
  const { commitment } = await normaliseAction(db, agent, ACTION_TABLE[req.name], req.parameters);
  const prepare = (p: Principal) =>
    prepareAction(db, p, {
      name: req.name,
      parameters: req.parameters,
      budgetMinor: commitment.budgetMinor,
      currency: commitment.currency,
    });
  let prepared;
  try {
    prepared = await prepare(agent);
  } catch (err) {
    if (!(err instanceof Problem && err.status === 403 && err.code.startsWith('mandate_'))) throw err;
    const asked = await prepare({ ...agent, agentClientId: null });
    return { outcome: 'awaiting-approval', approvalId: asked.approvalId, stepId: null, detail: err.detail };
  }
  const { executeStep: step } = await approveUnderMandate(db, agent, prepared.approvalId);
  const result = await executeStep(db, agent, req, step, opts);
  return {
    outcome: result.status < 400 ? 'executed' : 'failed',
    approvalId: prepared.approvalId,
    stepId: step.id,
    detail: result.detail,
  };
}

/** The request a firing that waited for a person was prepared as, read back from its approval. */
export async function approvedRequest(
  db: Knex,
  approvalId: string,
): Promise<{ req: GovernedRequest; status: string; stepId: string | null; digest: string }> {
  const row = await db('agent_approvals').where({ id: approvalId }).first('action', 'status', 'execute_step_id', 'action_digest');
  const name = row.action.name as ActionName;
  const parameters = row.action.parameters as Record<string, unknown>;
  const { campaignId, bookingId, lineId, ...body } = parameters;
  const params: Record<string, string> =
    name === 'campaign.amend' ? { id: String(campaignId) } : { bookingId: String(bookingId), lineId: String(lineId) };
  return { req: { name, parameters, params, body }, status: row.status, stepId: row.execute_step_id, digest: row.action_digest };
}
