import { randomUUID } from 'node:crypto';
import type { Knex } from 'knex';
import { assertHuman } from '../auth/guards';
import type { Principal } from '../auth/principal';
import { findCampaign } from '../campaigns/campaign-store';
import { toMinor } from '../db/knex';
import { badRequest, conflict, notFound } from '../errors';
import { isUuid } from '../ids';
import { putMandate } from '../agent/mandates';
import type { ActionName } from '../agent/actions';
import type {
  CreateRule,
  Rule,
  RuleAction,
  RuleDryRun,
  RuleFiring,
  RulePlanned,
  UpdateRule,
  RuleCondition,
  RuleGuardrails,
} from './rule-schemas';

/** The agent client id a rule acts as: its mandate is the workspace's mandate row of that id. */
export const ruleAgentId = (ruleId: string) => `rule-${ruleId}`;

/** The governed action a rule's action runs as (none for a notification). */
export function governedActionOf(action: RuleAction): ActionName | null {
  switch (action.kind) {
    case 'notify':
      return null;
    case 'pause-line':
      return 'line.pause';
    case 'resume-line':
      return 'line.resume';
    case 'move-budget':
      return 'campaign.amend';
  }
}

export interface RuleRow {
  id: string;
  advertiser_id: string;
  campaign_id: string;
  name: string;
  condition: RuleCondition;
  action: RuleAction;
  guardrails: RuleGuardrails;
  mode: 'notify-only' | 'active';
  version: number;
  created_by: string;
  enabled_by: string | null;
  enabled_at: Date | null;
  deleted_at: Date | null;
  created_at: Date;
  updated_at: Date;
}

export interface FiringRow {
  id: string;
  rule_id: string;
  rule_version: number;
  evaluation_day: string | Date;
  subject_id: string;
  mode: RuleRow['mode'];
  outcome: RuleFiring['outcome'];
  planned: RulePlanned;
  moved_minor: string;
  approval_id: string | null;
  step_id: string | null;
  detail: string | null;
  created_at: Date;
}

const day = (d: string | Date) => (typeof d === 'string' ? d.slice(0, 10) : d.toISOString().slice(0, 10));

export const firingView = (r: FiringRow): RuleFiring => ({
  id: r.id,
  ruleId: r.rule_id,
  ruleVersion: r.rule_version,
  evaluationDay: day(r.evaluation_day),
  subjectId: r.subject_id,
  mode: r.mode,
  outcome: r.outcome,
  planned: r.planned,
  movedMinor: toMinor(r.moved_minor),
  approvalId: r.approval_id,
  stepId: r.step_id,
  detail: r.detail,
  createdAt: r.created_at.toISOString(),
});

export const dryRunView = (r: Record<string, unknown>): RuleDryRun => ({
  id: r.id as string,
  ruleId: r.rule_id as string,
  ruleVersion: r.rule_version as number,
  fromDay: day(r.from_day as string | Date),
  throughDay: day(r.through_day as string | Date),
  movedMinor: toMinor(r.moved_minor as string),
  firings: r.firings as RuleDryRun['firings'],
  requestedBy: r.requested_by as string,
  createdAt: (r.created_at as Date).toISOString(),
});

async function ruleView(db: Knex, r: RuleRow): Promise<Rule> {
  const [mandate, lastFiring, lastDryRun] = await Promise.all([
    db('agent_mandates')
      .where({ advertiser_id: r.advertiser_id, agent_client_id: ruleAgentId(r.id) })
      .first(),
    db('rule_firings')
      .where({ rule_id: r.id })
      .orderBy([{ column: 'created_at', order: 'desc' }, 'id'])
      .first(),
    db('rule_dry_runs')
      .where({ rule_id: r.id })
      .orderBy([{ column: 'created_at', order: 'desc' }, 'id'])
      .first(),
  ]);
  const { firings: _firings, ...dry } = lastDryRun ? dryRunView(lastDryRun) : { firings: null };
  return {
    id: r.id,
    campaignId: r.campaign_id,
    name: r.name,
    condition: r.condition,
    action: r.action,
    guardrails: r.guardrails,
    mode: r.mode,
    version: r.version,
    agentClientId: ruleAgentId(r.id),
    mandate: mandate
      ? {
          allowedActions: mandate.allowed_actions as string[],
          budgetCeilingMinor: toMinor(mandate.budget_ceiling_minor),
          currency: mandate.currency as string,
        }
      : null,
    enabledBy: r.enabled_by,
    enabledAt: r.enabled_at ? r.enabled_at.toISOString() : null,
    createdBy: r.created_by,
    createdAt: r.created_at.toISOString(),
    updatedAt: r.updated_at.toISOString(),
    lastFiring: lastFiring ? firingView(lastFiring) : null,
    lastDryRun: lastDryRun ? (dry as Rule['lastDryRun']) : null,
  };
}

/** A line named by the rule's action must be a line booked in its campaign. */
async function assertLinesOfCampaign(db: Knex, campaignId: string, action: RuleAction): Promise<void> {
  if (action.kind !== 'move-budget' || !action.toLineId) return;
  const line = await db('booking_lines as l')
    .join('bookings as b', 'b.id', 'l.booking_id')
    .where({ 'b.campaign_id': campaignId, 'l.id': action.toLineId.toLowerCase() })
    .first('l.id');
  if (!line)
    throw badRequest(
      'The receiving line is not a line booked in this campaign.',
      [{ path: 'action.toLineId', message: 'not a line of the campaign' }],
      'line_not_in_campaign',
    );
}

/** A person writes rules; a rule starts notify-only, whatever it asks for. */
export async function createRule(db: Knex, p: Principal, body: CreateRule): Promise<Rule> {
  assertHuman(p, 'write automatic rules');
  const campaign = await findCampaign(db, p, body.campaignId);
  if (!campaign) throw notFound();
  await assertLinesOfCampaign(db, campaign.id, body.action);
  const [row] = (await db('rules')
    .insert({
      id: randomUUID(),
      advertiser_id: p.advertiserId,
      campaign_id: campaign.id,
      name: body.name,
      condition: JSON.stringify(body.condition),
      action: JSON.stringify(body.action),
      guardrails: JSON.stringify(body.guardrails),
      mode: 'notify-only',
      created_by: p.userId,
    })
    .returning('*')) as RuleRow[];
  return ruleView(db, row!);
}

/** The rule, if it is this caller's to see (another workspace's, a deleted one and an unknown id are one 404). */
export async function findRule(db: Knex, p: Principal, id: string, opts: { forUpdate?: boolean } = {}): Promise<RuleRow> {
  if (!isUuid(id)) throw notFound();
  const q = db('rules').where({ id: id.toLowerCase(), advertiser_id: p.advertiserId }).whereNull('deleted_at');
  if (opts.forUpdate) q.forUpdate();
  const row = (await q.first()) as RuleRow | undefined;
  if (!row || !(await findCampaign(db, p, row.campaign_id))) throw notFound();
  return row;
}

export async function readRule(db: Knex, p: Principal, id: string): Promise<Rule> {
  return ruleView(db, await findRule(db, p, id));
}

export async function listRules(db: Knex, p: Principal, filter: { campaignId?: string; limit: number }): Promise<Rule[]> {
  const rows = (await db('rules as r')
    .join('campaigns as c', 'c.id', 'r.campaign_id')
    .where({ 'r.advertiser_id': p.advertiserId })
    .whereNull('r.deleted_at')
    .whereRaw('c.channels <@ ?::text[]', [p.channels])
    .modify((q) => (filter.campaignId ? q.where('r.campaign_id', filter.campaignId.toLowerCase()) : q))
    .orderBy([{ column: 'r.created_at', order: 'desc' }, 'r.id'])
    .limit(filter.limit)
    .select('r.*')) as RuleRow[];
  return Promise.all(rows.map((r) => ruleView(db, r)));
}

/**
 * Changes a rule at the version the caller read. A change to what it does (condition, action,
 * guardrails) makes it a new rule: back to notify-only, its mandate withdrawn. Making it active
 * is a person's approval (`agent:approve`) of its mandate, only after a dry run of this version.
 */
export async function updateRule(db: Knex, p: Principal, id: string, body: UpdateRule): Promise<Rule> {
  assertHuman(p, 'change automatic rules');
  if (body.mode === 'active') assertHuman(p, 'make a rule act on its own', 'agent:approve');
  const row = await db.transaction(async (trx) => {
    const r = await findRule(trx, p, id, { forUpdate: true });
    if (r.version !== body.expectedVersion)
      throw conflict(`The rule is at version ${r.version}, not ${body.expectedVersion}. Read it again.`, 'version_conflict');
    const redefined = body.condition !== undefined || body.action !== undefined || body.guardrails !== undefined;
    const condition = body.condition ?? r.condition;
    const action = body.action ?? r.action;
    if (action.kind !== 'notify' && condition.subject !== 'line')
      throw badRequest('Pause, resume and budget moves act on a line: use subject line.', [
        { path: 'action', message: 'a line action needs subject line' },
      ]);
    if (body.action) await assertLinesOfCampaign(trx, r.campaign_id, body.action);
    let mode = redefined ? 'notify-only' : r.mode;
    if (body.mode === 'notify-only') mode = 'notify-only';
    if (body.mode === 'active') {
      const governed = governedActionOf(action);
      if (!governed) throw conflict('A notify rule only tells: it has nothing to do on its own.', 'nothing_to_enable');
      const dryRun = await trx('rule_dry_runs').where({ rule_id: r.id, rule_version: r.version }).first('id');
      if (redefined || !dryRun)
        throw conflict('Dry-run this version of the rule before making it active (POST …/dry-runs).', 'dry_run_required');
      await putMandate(trx, p, ruleAgentId(r.id), {
        allowedActions: [governed],
        budgetCeilingMinor: body.mandate!.budgetCeilingMinor,
        currency: 'GBP',
      });
      mode = 'active';
    }
    if (mode === 'notify-only')
      await trx('agent_mandates')
        .where({ advertiser_id: p.advertiserId, agent_client_id: ruleAgentId(r.id) })
        .del();
    const [updated] = (await trx('rules')
      .where({ id: r.id })
      .update({
        ...(body.name !== undefined ? { name: body.name } : {}),
        condition: JSON.stringify(condition),
        action: JSON.stringify(action),
        guardrails: JSON.stringify(body.guardrails ?? r.guardrails),
        mode,
        enabled_by: mode === 'active' ? (body.mode === 'active' ? p.userId : r.enabled_by) : null,
        enabled_at: mode === 'active' ? (body.mode === 'active' ? trx.fn.now() : r.enabled_at) : null,
        version: r.version + 1,
        updated_at: trx.fn.now(),
      })
      .returning('*')) as RuleRow[];
    return updated!;
  });
  return ruleView(db, row);
}

/** Removes a rule: it stops firing and its mandate goes; its firings and dry runs stay on record. */
export async function deleteRule(db: Knex, p: Principal, id: string): Promise<void> {
  assertHuman(p, 'delete automatic rules');
  await db.transaction(async (trx) => {
    const r = await findRule(trx, p, id, { forUpdate: true });
    await trx('rules').where({ id: r.id }).update({ deleted_at: trx.fn.now(), mode: 'notify-only', enabled_by: null, enabled_at: null });
    await trx('agent_mandates')
      .where({ advertiser_id: p.advertiserId, agent_client_id: ruleAgentId(r.id) })
      .del();
  });
}

export async function listFirings(db: Knex, p: Principal, id: string, limit: number): Promise<RuleFiring[]> {
  const r = await findRule(db, p, id);
  const rows = (await db('rule_firings')
    .where({ rule_id: r.id })
    .orderBy([{ column: 'created_at', order: 'desc' }, 'id'])
    .limit(limit)) as FiringRow[];
  return rows.map(firingView);
}

export async function listDryRuns(db: Knex, p: Principal, id: string, limit: number): Promise<RuleDryRun[]> {
  const r = await findRule(db, p, id);
  const rows = await db('rule_dry_runs')
    .where({ rule_id: r.id })
    .orderBy([{ column: 'created_at', order: 'desc' }, 'id'])
    .limit(limit);
  return rows.map(dryRunView);
}
