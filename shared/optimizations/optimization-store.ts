import { randomUUID } from 'node:crypto';
import { assertHuman } from '../auth/guards';
import type { Knex } from 'knex';
import { conflict, notFound } from '../errors';
import { isUuid } from '../ids';
import { callerId, type Principal } from '../auth/principal';
import { findCampaign } from '../campaigns/campaign-store';
import type { Campaign } from '../campaigns/campaign-schemas';
import { findPlanForCampaign, replacePlan } from '../plans/plan-store';
import { suggest, suggestionFacts, type PlanAmendment } from './suggest';
import { paceFacts, type GovernedProposal } from './pace';

/** The share off pace beyond which a running line is suggested a budget move or a pause (DELIVERY_PACING_TOLERANCE). */
const PACE_TOLERANCE = 0.15;
import { digestOf } from '../digest';

interface OptimizationRow {
  id: string;
  advertiser_id: string;
  campaign_id: string;
  kind: string;
  subject: string;
  basis_plan_version: number;
  status: 'open' | 'accepted' | 'rejected' | 'stale';
  reason: string;
  figures: Record<string, unknown>;
  change: PlanAmendment | GovernedProposal;
  decided_by: string | null;
  decided_at: Date | null;
  created_at: Date;
}

const view = (r: OptimizationRow) => ({
  id: r.id,
  campaignId: r.campaign_id,
  kind: r.kind,
  status: r.status,
  reason: r.reason,
  figures: r.figures,
  change: r.change,
  basisPlanVersion: r.basis_plan_version,
  decidedBy: r.decided_by,
  decidedAt: r.decided_at?.toISOString() ?? null,
  createdAt: r.created_at.toISOString(),
});

/**
 * Brings the campaign's suggestions up to date: new ones are recorded once (a rejected one is
 * never suggested again for the same plan version), and open ones whose basis has gone
 * (the plan moved on, or the rule no longer holds) become stale.
 */
async function refresh(db: Knex, p: Principal, campaign: Campaign, idleDays: number, paceTolerance: number): Promise<void> {
  const { plan, current } = await currentSuggestions(db, p, campaign, idleDays, paceTolerance);
  await db.transaction(async (trx) => {
    const open = trx('optimizations').where({ campaign_id: campaign.id, status: 'open' });
    const live = new Set(current.map((s) => `${s.kind}|${s.subject}`));
    const stale = (await open.clone().select('id', 'kind', 'subject', 'basis_plan_version')).filter(
      (o) => !plan || o.basis_plan_version !== plan.version || !live.has(`${o.kind}|${o.subject}`),
    );
    if (stale.length) {
      await trx('optimizations')
        .whereIn(
          'id',
          stale.map((o) => o.id),
        )
        .andWhere({ status: 'open' })
        .update({ status: 'stale' });
    }
    if (!plan || current.length === 0) return;
    await trx('optimizations')
      .insert(
        current.map((s) => ({
          id: randomUUID(),
          advertiser_id: p.advertiserId,
          campaign_id: campaign.id,
          kind: s.kind,
          subject: s.subject,
          basis_plan_version: plan.version,
          reason: s.reason,
          figures: JSON.stringify(s.figures),
          change: JSON.stringify(s.change),
        })),
      )
      .onConflict(['campaign_id', 'kind', 'subject', 'basis_plan_version'])
      .ignore();
  });
}

/** What the rules suggest for the campaign's plan as it is now. */
async function currentSuggestions(db: Knex, p: Principal, campaign: Campaign, idleDays: number, paceTolerance: number) {
  const plan = (await findPlanForCampaign(db, p, campaign))?.plan;
  const current = plan
    ? [
        ...suggest({ plan, ...(await suggestionFacts(db, p.advertiserId, campaign.id)), now: new Date(), idleDays }),
        ...(await paceFacts(db, p.advertiserId, campaign.id, paceTolerance)),
      ]
    : [];
  return { plan, current };
}

async function requireCampaign(db: Knex, p: Principal, id: string): Promise<Campaign> {
  const campaign = isUuid(id) ? await findCampaign(db, p, id) : null;
  if (!campaign) throw notFound();
  return campaign;
}

/** GET /campaigns/{id}/optimizations: generated from bookings, outcomes and pixel data, newest first. */
export async function listOptimizations(db: Knex, p: Principal, campaignId: string, idleDays: number, paceTolerance = PACE_TOLERANCE) {
  const campaign = await requireCampaign(db, p, campaignId);
  await refresh(db, p, campaign, idleDays, paceTolerance);
  const rows = (await db('optimizations')
    .where({ campaign_id: campaign.id })
    .orderBy([
      { column: 'created_at', order: 'desc' },
      { column: 'id', order: 'desc' },
    ])
    .limit(200)) as OptimizationRow[];
  return { optimizations: rows.map(view) };
}

/** The caller's optimization (tenant and campaign channel scope), or null. */
export async function findOptimization(db: Knex, p: Principal, id: string, forUpdate = false): Promise<OptimizationRow | null> {
  if (!isUuid(id)) return null;
  const q = db('optimizations').where({ id, advertiser_id: p.advertiserId }).first();
  if (forUpdate) q.forUpdate();
  const row = (await q) as OptimizationRow | undefined;
  if (!row || !(await findCampaign(db, p, row.campaign_id))) return null;
  return row;
}

/** Open, and still what the rules say about the plan as it is: what may be decided on. */
async function decidable(trx: Knex, p: Principal, id: string, idleDays: number, paceTolerance: number): Promise<OptimizationRow> {
  const row = await findOptimization(trx, p, id, true);
  if (!row) throw notFound();
  if (row.status === 'rejected') throw conflict('This suggestion has already been rejected.', 'optimization_rejected', 'terminal');
  if (row.status === 'accepted') throw conflict('This suggestion has already been accepted.', 'optimization_accepted', 'terminal');
  const campaign = (await findCampaign(trx, p, row.campaign_id))!;
  const { plan, current } = await currentSuggestions(trx, p, campaign, idleDays, paceTolerance);
  const same = current.find((c) => c.kind === row.kind && c.subject === row.subject);
  if (
    row.status === 'stale' ||
    !plan ||
    plan.version !== row.basis_plan_version ||
    !same ||
    digestOf(same.change) !== digestOf(row.change)
  ) {
    throw conflict(
      'This suggestion is stale: the plan or the facts behind it have changed. List the optimizations again.',
      'optimization_stale',
      'terminal',
    );
  }
  return row;
}

/** POST /optimizations/{id}/reject (spec 22): once, while open and current. */
export async function rejectOptimization(db: Knex, p: Principal, id: string, idleDays: number, paceTolerance = PACE_TOLERANCE) {
  return db.transaction(async (trx) => {
    const row = await decidable(trx, p, id, idleDays, paceTolerance);
    const [updated] = await trx('optimizations')
      .where({ id: row.id, status: 'open' })
      .update({ status: 'rejected', decided_by: callerId(p), decided_at: trx.fn.now() })
      .returning('*');
    return { optimization: view(updated as OptimizationRow) };
  });
}

/** A person accepts: the change is applied through the plan amendment path, which voids the plan's approval. */
export async function acceptOptimization(db: Knex, p: Principal, id: string, idleDays: number, paceTolerance = PACE_TOLERANCE) {
  assertHuman(p, 'accept an optimization (an agent may reject one)');
  return db.transaction(async (trx) => {
    const row = await decidable(trx, p, id, idleDays, paceTolerance);
    if (row.change.type === 'governed-action') {
      throw conflict(
        `A pacing suggestion changes a running booking: carry it out as the governed action ${row.change.action} with its parameters, which a person approves.`,
        'governed_action_required',
      );
    }
    // Accepting is the explicit new version: a draft that needs approving before any supplier hears of it.
    const amended = await replacePlan(
      trx,
      p,
      row.campaign_id,
      { lines: row.change.lines, expectedVersion: row.change.expectedVersion },
      { whileBooked: 'newVersion' },
    );
    const [updated] = await trx('optimizations')
      .where({ id: row.id, status: 'open' })
      .update({ status: 'accepted', decided_by: callerId(p), decided_at: trx.fn.now() })
      .returning('*');
    return { optimization: view(updated as OptimizationRow), plan: amended.plan };
  });
}
