import { randomUUID } from 'node:crypto';
import type { Knex } from 'knex';
import { z } from 'zod';
import { assertHuman } from '../auth/guards';
import type { Principal } from '../auth/principal';
import { addDays } from '../dates';
import { conflict } from '../errors';
import { coolingDown, planAction, type RuleLine } from './rule-condition';
import { matches } from './rule-evaluation';
import { loadCampaignStates } from './rule-inputs';
import type { RuleDryRun } from './rule-schemas';
import { dryRunView, findRule } from './rule-store';

export const DryRunRequestSchema = z
  .strictObject({
    /** The mandate's ceiling to judge by (default: the rule's own mandate, or none): a move above it would ask a person. */
    budgetCeilingMinor: z.number().int().min(0).max(1_900_000_000).optional(),
  })
  .meta({ id: 'RuleDryRunRequest' });
export type DryRunRequest = z.infer<typeof DryRunRequestSchema>;

type DryFiring = RuleDryRun['firings'][number];

/**
 * What the rule would have done over its campaign's own delivery so far: each evaluation day
 * from the flight's second to today, the same condition, guardrails and plan as the live cycle,
 * as if it had been active; its moves and pauses carried forward into the days after them (the
 * delivery itself is what happened). Stored, so a person enables what they saw.
 */
export async function dryRunRule(db: Knex, p: Principal, id: string, body: DryRunRequest, tolerance: number): Promise<RuleDryRun> {
  assertHuman(p, 'dry-run automatic rules');
  const rule = await findRule(db, p, id);
  const c = (await loadCampaignStates(db, [rule.campaign_id])).get(rule.campaign_id);
  if (!c || !c.lines.length)
    throw conflict('The campaign has no running lines yet: there is no history to run the rule over.', 'no_history');
  const mandate = await db('agent_mandates')
    .where({ advertiser_id: p.advertiserId, agent_client_id: `rule-${rule.id}` })
    .first();
  const ceiling = body.budgetCeilingMinor ?? (mandate ? Number(mandate.budget_ceiling_minor) : null);
  const lines: RuleLine[] = c.lines.map((l) => ({ ...l }));
  const from = addDays(c.startDate, 1);
  const lastDay = addDays(c.endDate, 1) < c.today ? addDays(c.endDate, 1) : c.today;
  const firings: DryFiring[] = [];
  const lastFired = new Map<string, string>();
  const movedOn = new Map<string, number>();
  let moved = 0;
  for (let day = from; day <= lastDay; day = addDays(day, 1)) {
    const sim = { ...c, today: day, lines };
    for (const hit of matches(rule, sim, tolerance)) {
      const subjectId = hit.subject?.lineId ?? c.campaignId;
      if (coolingDown(rule.guardrails, lastFired.get(subjectId) ?? null, day)) continue;
      const plan = planAction(rule, sim, hit.subject, hit, { movedToday: movedOn.get(day) ?? 0, movedInFlight: moved }, tolerance);
      if (!plan) continue;
      const amount = plan.planned.amountMinor ?? 0;
      const outcome: DryFiring['outcome'] = plan.held
        ? 'held'
        : rule.action.kind === 'notify'
          ? 'would-notify'
          : ceiling !== null && amount > ceiling
            ? 'would-ask'
            : 'would-act';
      firings.push({ day, subjectId, outcome, planned: plan.planned, detail: plan.held });
      if (outcome === 'held') continue;
      lastFired.set(subjectId, day);
      if (outcome !== 'would-act') continue;
      const subject = hit.subject!;
      if (plan.planned.action === 'move-budget') {
        subject.budgetMinor -= amount;
        lines.find((l) => l.lineId === plan.planned.toLineId)!.budgetMinor += amount;
        movedOn.set(day, (movedOn.get(day) ?? 0) + amount);
        moved += amount;
      } else if (plan.planned.action === 'pause-line') Object.assign(subject, { running: false, paused: true, idle: true });
      else if (plan.planned.action === 'resume-line') Object.assign(subject, { running: true, paused: false, idle: false });
    }
  }
  const [row] = await db('rule_dry_runs')
    .insert({
      id: randomUUID(),
      rule_id: rule.id,
      advertiser_id: p.advertiserId,
      rule_version: rule.version,
      from_day: from,
      through_day: lastDay,
      firings: JSON.stringify(firings),
      moved_minor: moved,
      requested_by: p.userId,
    })
    .returning('*');
  return dryRunView(row);
}
