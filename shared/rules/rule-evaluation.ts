import { randomUUID } from 'node:crypto';
import type { Knex } from 'knex';
import { addDays } from '../dates';
import { toMinor } from '../db/knex';
import { recordEvent } from '../events/record';
import type { Logger } from '../logger';
import { conditionHolds, coolingDown, inWindow, planAction, type RuleLine } from './rule-condition';
import { actAsRule, approvedRequest, executeStep, rulePrincipal, type ActOutcome, type RunOptions } from './rule-execution';
import { loadCampaignStates, type CampaignState } from './rule-inputs';
import type { RuleOutcome, RulePlanned } from './rule-schemas';
import type { FiringRow, RuleRow } from './rule-store';

export interface EvaluationOptions extends RunOptions {
  /** DELIVERY_PACING_TOLERANCE: what the outlook calls under-delivery. */
  tolerance: number;
  /** Only this workspace's rules (after its delivery poll). */
  advertiserId?: string;
  real?: Date;
  logger?: Logger;
}

export interface EvaluationResult {
  rules: number;
  subjects: number;
  fired: number;
  executed: number;
  awaitingApproval: number;
  held: number;
  failed: number;
}

/**
 * One evaluation cycle: every live rule (of one workspace, or all) against its campaign's
 * figures on its evaluation day (today on the campaign's clock, reading the days over). A
 * condition that holds fires once per rule, subject and day however many cycles run at once;
 * then any firing a person has since approved is carried out.
 */
export async function evaluateRules(db: Knex, opts: EvaluationOptions): Promise<EvaluationResult> {
  const result: EvaluationResult = { rules: 0, subjects: 0, fired: 0, executed: 0, awaitingApproval: 0, held: 0, failed: 0 };
  const rules = (await db('rules')
    .whereNull('deleted_at')
    .modify((q) => (opts.advertiserId ? q.where({ advertiser_id: opts.advertiserId }) : q))
    .orderBy('id')) as RuleRow[];
  const states = await loadCampaignStates(
    db,
    rules.map((r) => r.campaign_id),
    opts.real,
  );
  const seen = await firedBefore(
    db,
    rules.map((r) => r.id),
  );
  const evaluate = async (rule: RuleRow) => {
    const c = states.get(rule.campaign_id);
    // A campaign whose lines' polls for the day are still to come is evaluated by a later cycle.
    if (!c || !c.fresh) return;
    result.rules += 1;
    for (const hit of matches(rule, c, opts.tolerance)) {
      result.subjects += 1;
      // Already fired today, or resting: settled without a transaction (the transaction checks again).
      const before = seen.get(`${rule.id}|${hit.subject?.lineId ?? c.campaignId}`);
      if (before && (before.lastAny === c.today || coolingDown(rule.guardrails, before.lastActed, c.today))) continue;
      const outcome = await fire(db, rule, c, hit, opts);
      if (!outcome) continue;
      result.fired += 1;
      if (outcome === 'executed') result.executed += 1;
      if (outcome === 'awaiting-approval') result.awaitingApproval += 1;
      if (outcome === 'held') result.held += 1;
      if (outcome === 'failed') result.failed += 1;
    }
  };
  // Rules of different campaigns share nothing but the pool: a few at once (each firing locks its own rule).
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(RULE_CONCURRENCY, rules.length) }, async () => {
      while (next < rules.length) await evaluate(rules[next++]!);
    }),
  );
  const followed = await followApprovals(db, opts);
  result.executed += followed.executed;
  result.failed += followed.failed;
  return result;
}

const RULE_CONCURRENCY = 4;

/** Each rule's subjects' last firing day, and last day it acted or told (what the cooldown counts), in one query. */
async function firedBefore(db: Knex, ruleIds: string[]): Promise<Map<string, { lastAny: string; lastActed: string | null }>> {
  const out = new Map<string, { lastAny: string; lastActed: string | null }>();
  if (!ruleIds.length) return out;
  const rows = (await db('rule_firings')
    .whereIn('rule_id', ruleIds)
    .groupBy('rule_id', 'subject_id')
    .select(
      'rule_id',
      'subject_id',
      db.raw("to_char(max(evaluation_day), 'YYYY-MM-DD') as last_any"),
      db.raw("to_char(max(evaluation_day) filter (where outcome not in ('held', 'failed')), 'YYYY-MM-DD') as last_acted"),
    )) as Array<{ rule_id: string; subject_id: string; last_any: string; last_acted: string | null }>;
  for (const r of rows) out.set(`${r.rule_id}|${r.subject_id}`, { lastAny: r.last_any, lastActed: r.last_acted });
  return out;
}

interface Hit {
  subject: RuleLine | null;
  observed: number | string | null;
  through: string;
}

/** The subjects whose condition holds on the rule's evaluation day, within its time window. */
export function matches(rule: Pick<RuleRow, 'condition' | 'guardrails'>, c: CampaignState, tolerance: number): Hit[] {
  const day = c.today;
  if (day > addDays(c.endDate, 1) || !inWindow(rule.guardrails, day)) return [];
  const subjects: Array<RuleLine | null> = rule.condition.subject === 'line' ? c.lines : [null];
  const hits: Hit[] = [];
  for (const subject of subjects) {
    const seen = conditionHolds(rule.condition, c, subject, day, tolerance);
    if (seen.holds) hits.push({ subject, observed: seen.observed, through: seen.through });
  }
  return hits;
}

/**
 * Fires the rule once for a subject on its evaluation day. Under the rule's row lock: the
 * firing's uniqueness, the cooldown and the budget moved so far are read and the move's amount
 * is held against the guardrails in one transaction, so concurrent cycles cannot both move.
 * The governed action then runs outside the lock; a failed one gives its hold back.
 */
async function fire(db: Knex, rule: RuleRow, c: CampaignState, hit: Hit, opts: EvaluationOptions): Promise<RuleOutcome | null> {
  const subjectId = hit.subject?.lineId ?? c.campaignId;
  const day = c.today;
  const claimed = await db.transaction(async (trx) => {
    const r = (await trx('rules').where({ id: rule.id, version: rule.version }).whereNull('deleted_at').forUpdate().first()) as
      RuleRow | undefined;
    if (!r) return null;
    // One read: whether it fired today, when it last acted (the cooldown), and what it moved today and in the flight.
    const {
      rows: [stats],
    } = await trx.raw<{ rows: Array<{ fired_today: boolean; last_day: string | null; today: string; flight: string }> }>(
      `select exists(select 1 from rule_firings where rule_id = :rule and evaluation_day = :day and subject_id = :subject) as fired_today,
         (select to_char(max(evaluation_day), 'YYYY-MM-DD') from rule_firings
           where rule_id = :rule and subject_id = :subject and outcome not in ('held', 'failed')) as last_day,
         (select coalesce(sum(moved_minor), 0) from rule_firings where rule_id = :rule and evaluation_day = :day) as today,
         (select coalesce(sum(moved_minor), 0) from rule_firings where rule_id = :rule) as flight`,
      { rule: r.id, day, subject: subjectId },
    );
    if (stats!.fired_today || coolingDown(r.guardrails, stats!.last_day, day)) return null;
    const moved = stats!;
    const plan = planAction(
      r,
      c,
      hit.subject,
      hit,
      { movedToday: toMinor(moved.today), movedInFlight: toMinor(moved.flight) },
      opts.tolerance,
    );
    if (!plan) return null;
    const acts = r.mode === 'active' && r.action.kind !== 'notify' && !plan.held;
    const outcome: RuleOutcome = plan.held ? 'held' : acts ? 'executing' : 'notified';
    const [row] = (await trx('rule_firings')
      .insert({
        id: randomUUID(),
        rule_id: r.id,
        advertiser_id: r.advertiser_id,
        campaign_id: r.campaign_id,
        rule_version: r.version,
        evaluation_day: day,
        subject_id: subjectId,
        mode: r.mode,
        outcome,
        planned: JSON.stringify(plan.planned),
        moved_minor: acts ? (plan.planned.amountMinor ?? 0) : 0,
        detail: plan.held ?? (acts ? null : r.mode === 'notify-only' ? 'notify-only: nothing was changed' : null),
      })
      .returning('*')) as FiringRow[];
    if (outcome !== 'executing') await told(trx, r, row!);
    return { rule: r, firing: row! };
  });
  if (!claimed) return null;
  if (claimed.firing.outcome !== 'executing') return claimed.firing.outcome;
  return carryOut(db, claimed.rule, claimed.firing, claimed.firing.planned, opts);
}

async function carryOut(db: Knex, rule: RuleRow, firing: FiringRow, planned: RulePlanned, opts: EvaluationOptions): Promise<RuleOutcome> {
  let acted: ActOutcome | { outcome: 'failed'; approvalId: null; stepId: null; detail: string };
  try {
    acted = await actAsRule(db, rule, planned, opts);
  } catch (err) {
    opts.logger?.warn({ ruleId: rule.id, firingId: firing.id, err: { message: (err as Error).message } }, 'rule action failed');
    acted = { outcome: 'failed', approvalId: null, stepId: null, detail: (err as Error).message.slice(0, 500) };
  }
  await settle(db, rule, firing.id, acted);
  return acted.outcome;
}

/** A firing's outcome, and its event: a failure gives back the budget it held against the guardrails. */
async function settle(
  db: Knex,
  rule: RuleRow,
  firingId: string,
  acted: { outcome: RuleOutcome; approvalId: string | null; stepId: string | null; detail: string | null },
  version = 1,
): Promise<void> {
  await db.transaction(async (trx) => {
    const [row] = (await trx('rule_firings')
      .where({ id: firingId })
      .update({
        outcome: acted.outcome,
        approval_id: acted.approvalId,
        step_id: acted.stepId,
        detail: acted.detail,
        ...(acted.outcome === 'failed' ? { moved_minor: 0 } : {}),
        updated_at: trx.fn.now(),
      })
      .returning('*')) as FiringRow[];
    await told(trx, rule, row!, version);
  });
}

/** A firing told to subscribers: once when it fires, again (version 2) when a person's decision on it is carried out. */
const told = (trx: Knex, rule: RuleRow, f: FiringRow, version = 1) =>
  recordEvent(trx, {
    workspaceId: rule.advertiser_id,
    type: 'rule.fired',
    subjectId: f.id,
    subjectVersion: version,
    body: {
      ruleId: rule.id,
      campaignId: rule.campaign_id,
      subjectId: f.subject_id,
      evaluationDay: typeof f.evaluation_day === 'string' ? f.evaluation_day : f.evaluation_day.toISOString().slice(0, 10),
      action: f.planned.action,
      outcome: f.outcome,
      amountMinor: f.planned.amountMinor,
      approvalId: f.approval_id,
    },
  });

/**
 * Firings that waited for a person: once approved, carried out against the approved step (in
 * the name it was prepared in); once abandoned, failed, their hold given back. Each is claimed
 * first, so concurrent cycles carry it out once.
 */
async function followApprovals(db: Knex, opts: EvaluationOptions): Promise<{ executed: number; failed: number }> {
  const waiting = (await db('rule_firings as f')
    .join('agent_approvals as a', 'a.id', 'f.approval_id')
    .join('rules as r', 'r.id', 'f.rule_id')
    .where('f.outcome', 'awaiting-approval')
    .whereIn('a.status', ['approved', 'abandoned'])
    .modify((q) => (opts.advertiserId ? q.where('f.advertiser_id', opts.advertiserId) : q))
    .select('r.*', 'f.id as firing_id', 'f.approval_id')) as Array<RuleRow & { firing_id: string; approval_id: string }>;
  const done = { executed: 0, failed: 0 };
  for (const w of waiting) {
    const claimed = await db('rule_firings').where({ id: w.firing_id, outcome: 'awaiting-approval' }).update({ outcome: 'executing' });
    if (!claimed) continue;
    const rule: RuleRow = w;
    const approved = await approvedRequest(db, w.approval_id);
    let acted: { outcome: RuleOutcome; approvalId: string; stepId: string | null; detail: string | null };
    if (approved.status !== 'approved' || !approved.stepId) {
      acted = { outcome: 'failed', approvalId: w.approval_id, stepId: null, detail: 'a person abandoned the action' };
    } else if (w.deleted_at) {
      // A rule deleted since it asked does nothing more, approved or not.
      acted = {
        outcome: 'failed',
        approvalId: w.approval_id,
        stepId: approved.stepId,
        detail: 'the rule was deleted before its action ran',
      };
    } else {
      try {
        const person = { ...rulePrincipal(rule), agentClientId: null };
        const r = await executeStep(db, person, approved.req, { id: approved.stepId, actionDigest: approved.digest }, opts);
        acted = { outcome: r.status < 400 ? 'executed' : 'failed', approvalId: w.approval_id, stepId: approved.stepId, detail: r.detail };
      } catch (err) {
        acted = { outcome: 'failed', approvalId: w.approval_id, stepId: approved.stepId, detail: (err as Error).message.slice(0, 500) };
      }
    }
    await settle(db, rule, w.firing_id, acted, 2);
    done[acted.outcome === 'executed' ? 'executed' : 'failed'] += 1;
  }
  return done;
}
