import { randomUUID } from 'node:crypto';
import type { Knex } from 'knex';
import { firstPrepared, type SqlPart } from '../db/knex';
import { badRequest, conflict, notFound, unprocessable } from '../errors';
import type { Principal } from '../auth/principal';
import { approvalsRequired, assertMayApprovePlan } from '../auth/spend-authority';
import { readWorkspaceSettings } from '../workspaces/workspace-settings';
import { refuseEndedFlight } from '../campaigns/flight';
import { findAdapter } from '../adapters/catalogue';
import { digestOf } from '../digest';
import { refuseEditWhileBooked, refuseIfBooked } from '../campaigns/open-booking';
import type { Campaign, Plan, PlanApproval, PlanLine, ReplacePlan } from '../campaigns/campaign-schemas';
import type { CreativeRef } from '../creatives/creative-schemas';
import { currentCreativesOfLines, planCreativeRefs, type CurrentCreativeRow } from '../creatives/creative-store';
import { findCampaign, setCampaignStatus } from '../campaigns/campaign-store';

interface PlanRow {
  id: string;
  campaign_id: string;
  advertiser_id: string;
  version: number;
  status: 'draft' | 'approved';
  lines: PlanLine[];
  approved_snapshot: unknown;
  approved_digest: string | null;
  approved_by: string | null;
  approved_at: Date | null;
  /** The approvals given to this version (two are needed above the workspace's second-approval amount). */
  approvals: PlanApproval[];
  created_at: Date;
  updated_at: Date;
  /** Read with an approved plan: its lines' creatives at their current versions (`currentCreativesOfLines`). */
  current_creatives?: CurrentCreativeRow[] | null;
  /** Read with the plan: the workspace's second-approval amount (null: one approver suffices). */
  second_approval_above_minor?: string | number | null;
}

const secondApprovalAbove = (r: PlanRow): number | null =>
  r.second_approval_above_minor == null ? null : Number(r.second_approval_above_minor);

/**
 * What a human approves: the campaign's commercial terms and the plan's lines, exactly,
 * with each line's creatives at the version, bytes and delivery metadata they had.
 */
export function planSnapshot(
  campaign: Campaign,
  plan: { id: string; version: number; lines: Array<PlanLine & { creatives: CreativeRef[] }> },
) {
  return {
    campaign: {
      id: campaign.id,
      name: campaign.name,
      clientName: campaign.clientName,
      startDate: campaign.startDate,
      endDate: campaign.endDate,
      budgetMinor: campaign.budgetMinor,
      maximumCommitmentMinor: campaign.maximumCommitmentMinor,
      currency: campaign.currency,
      channels: campaign.channels,
      executionMode: campaign.executionMode,
    },
    plan: { id: plan.id, version: plan.version, lines: plan.lines },
  };
}
export type PlanSnapshot = ReturnType<typeof planSnapshot>;

/** The snapshot of the plan as things stand now (creatives resolved to their current versions). */
export async function currentSnapshot(
  db: Knex,
  p: Principal,
  campaign: Campaign,
  plan: { id: string; version: number; lines: PlanLine[]; current_creatives?: CurrentCreativeRow[] | null },
): Promise<PlanSnapshot> {
  const refs = await planCreativeRefs(db, p, plan.lines, plan.current_creatives ?? undefined);
  const lines = plan.lines.map((l, i) => ({ ...l, creatives: refs[i]! }));
  return planSnapshot(campaign, { id: plan.id, version: plan.version, lines });
}

async function toPlan(db: Knex, p: Principal, r: PlanRow, campaign: Campaign): Promise<Plan> {
  let current = false;
  if (r.status === 'approved') {
    // A creative revised or withdrawn since approval makes the approval stale, not the read an error.
    current = await currentSnapshot(db, p, campaign, r)
      .then((snap) => digestOf(snap) === r.approved_digest)
      .catch(() => false);
  }
  return {
    id: r.id,
    campaignId: r.campaign_id,
    version: r.version,
    status: r.status,
    lines: r.lines,
    totalBudgetMinor: r.lines.reduce((s, l) => s + l.budgetMinor, 0),
    approvedDigest: r.approved_digest,
    approvedAt: r.approved_at?.toISOString() ?? null,
    approvedBy: r.approved_by,
    approvalCurrent: current,
    approvals: r.approvals ?? [],
    approvalsRequired: approvalsRequired(campaign.maximumCommitmentMinor, secondApprovalAbove(r)),
    createdAt: r.created_at.toISOString(),
    updatedAt: r.updated_at.toISOString(),
  };
}

export interface StoredPlan {
  plan: Plan;
  campaign: Campaign;
  approvedSnapshot: PlanSnapshot | null;
}

/**
 * A plan row. `reading`: the plan is read to be shown or launched, so an approved plan comes with
 * its lines' creatives as they are now (`current_creatives`), which say whether its approval is
 * current, in the same round trip. A plan read to be changed does not need them. `readWith`:
 * a caller's own scalar subquery over the plan row (`p`), answered as `read`.
 */
async function loadPlanRow(
  db: Knex,
  where: Record<string, string>,
  opts: { forUpdate?: boolean; reading?: boolean; readWith?: SqlPart } = {},
): Promise<(PlanRow & { read_with?: unknown }) | undefined> {
  const q = db<PlanRow>('plans as p').where(Object.fromEntries(Object.entries(where).map(([k, v]) => [`p.${k}`, v])));
  q.select('p.*');
  q.select(db.raw('(select w.second_approval_above_minor from workspaces w where w.id = p.advertiser_id) as second_approval_above_minor'));
  if (opts.reading) {
    const creatives = currentCreativesOfLines(db, 'p.lines', 'p.advertiser_id');
    q.select(db.raw(`case when p.status = 'approved' then ${creatives.sql} end as current_creatives`, creatives.bindings));
  }
  if (opts.readWith) q.select(db.raw(`(${opts.readWith.sql}) as read_with`, opts.readWith.bindings));
  if (opts.forUpdate) q.forUpdate();
  // Prepared: read by every launch and every read of a campaign's plan.
  return firstPrepared<PlanRow>(db, q);
}

/** Reads a plan by id within the caller's tenant and channel scope. */
export async function findPlan(db: Knex, p: Principal, planId: string): Promise<StoredPlan | null> {
  const row = await loadPlanRow(db, { id: planId, advertiser_id: p.advertiserId }, { reading: true });
  if (!row) return null;
  const campaign = await findCampaign(db, p, row.campaign_id);
  if (!campaign) return null;
  return { plan: await toPlan(db, p, row, campaign), campaign, approvedSnapshot: row.approved_snapshot as PlanSnapshot | null };
}

/** A campaign's plan, with what the caller's `readWith` subquery answered in the same read (see `loadPlanRow`). */
export async function findPlanForCampaign(
  db: Knex,
  p: Principal,
  campaign: Campaign,
  opts: { readWith?: SqlPart } = {},
): Promise<(StoredPlan & { read?: unknown }) | null> {
  const row = await loadPlanRow(db, { campaign_id: campaign.id, advertiser_id: p.advertiserId }, { reading: true, ...opts });
  return row
    ? {
        plan: await toPlan(db, p, row, campaign),
        campaign,
        approvedSnapshot: row.approved_snapshot as PlanSnapshot | null,
        read: row.read_with,
      }
    : null;
}

/**
 * Each line must fit the campaign and be bookable by its adapter in the campaign's execution mode.
 * Every line's issues are reported together (one 400 naming each), before what an adapter refuses (422).
 */
async function checkLines(db: Knex, p: Principal, campaign: Campaign, lines: ReplacePlan['lines']): Promise<void> {
  const issues: Array<{ path: string; message: string; code: string }> = [];
  const refusals: Error[] = [];
  lines.forEach((line, i) => {
    const at = `body.lines.${i}`;
    if (!campaign.channels.includes(line.channel)) {
      issues.push({
        path: `${at}.channel`,
        message: `${line.channel} is not one of the campaign's channels`,
        code: 'channel_not_in_campaign',
      });
    }
    const adapter = findAdapter(line.adapterKey);
    if (!adapter) {
      issues.push({ path: `${at}.adapterKey`, message: `${line.adapterKey} is not a known supplier adapter`, code: 'unknown_adapter' });
      return;
    }
    if (!adapter.channels.includes(line.channel)) {
      refusals.push(unprocessable(`Adapter ${adapter.key} does not book ${line.channel}.`, 'adapter_channel_unsupported', 'correctable'));
    }
    if (!adapter.modes.includes(campaign.executionMode)) {
      refusals.push(unprocessable(`Adapter ${adapter.key} cannot execute in ${campaign.executionMode} mode.`, 'adapter_mode_unsupported'));
    }
    // An AdCP seller books a product at one of its prices; no other supplier knows of either.
    if (adapter.kind === 'adcp' && !line.supplierProduct) {
      issues.push({
        path: `${at}.supplierProduct`,
        message: `required on ${adapter.key}: name the seller's product and pricing option`,
        code: 'supplier_product_required',
      });
    }
    if (line.dailyCapMinor !== undefined && line.dailyCapMinor > line.budgetMinor) {
      throw badRequest(`lines.${i}.dailyCapMinor is over the line's budget of ${line.budgetMinor}.`, undefined, 'daily_cap_over_budget');
    }
    if (adapter.kind !== 'adcp' && line.supplierProduct) {
      issues.push({
        path: `${at}.supplierProduct`,
        message: `only for AdCP sellers; ${adapter.key} is not one`,
        code: 'supplier_product_unexpected',
      });
    }
  });
  const total = lines.reduce((s, l) => s + l.budgetMinor, 0);
  if (total > campaign.budgetMinor) {
    issues.push({
      path: 'body.lines',
      message: `the lines add up to ${total}, over the campaign budget of ${campaign.budgetMinor}`,
      code: 'plan_over_budget',
    });
  }
  if (issues.length) {
    const codes = [...new Set(issues.map((x) => x.code))];
    throw badRequest(
      issues.map((x) => `${x.path.replace(/^body\./, '')}: ${x.message}.`).join(' '),
      issues,
      codes.length === 1 ? codes[0] : 'validation_failed',
    );
  }
  if (refusals[0]) throw refusals[0];
  // Each creative must be the caller's and made for the line's channel.
  await planCreativeRefs(db, p, lines);
}

/**
 * Creates or replaces a campaign's plan lines. Replacing voids any approval, so a running
 * campaign's plan is refused (409 `plan_locked_in_flight`: its lines are amended instead), unless
 * the caller asks for `newVersion`: a person accepting a suggested change, which is an explicit new
 * draft version that must be approved, and cannot be while the booking is open, before anything
 * changes at a supplier.
 */
export async function replacePlan(
  db: Knex,
  p: Principal,
  campaignId: string,
  input: ReplacePlan,
  opts: { whileBooked?: 'refuse' | 'newVersion' } = {},
): Promise<StoredPlan> {
  return db.transaction(async (trx) => {
    const campaign = await findCampaign(trx, p, campaignId, { forUpdate: true });
    if (!campaign) throw notFound();
    if (opts.whileBooked !== 'newVersion') await refuseEditWhileBooked(trx, campaign.id);
    await checkLines(trx, p, campaign, input.lines);
    const lines: PlanLine[] = input.lines.map((l) => ({ id: randomUUID(), ...l }));
    const existing = await loadPlanRow(trx, { campaign_id: campaign.id }, { forUpdate: true });
    if (!existing) {
      if (input.expectedVersion !== undefined && input.expectedVersion !== 0) {
        throw conflict(`The campaign has no plan yet; expectedVersion must be 0 or omitted.`, 'version_conflict');
      }
      const [row] = await trx<PlanRow>('plans')
        .insert({
          id: randomUUID(),
          campaign_id: campaign.id,
          advertiser_id: p.advertiserId,
          version: 1,
          status: 'draft',
          lines: JSON.stringify(lines),
        } as never)
        .returning('*');
      const { secondApprovalAboveMinor } = await readWorkspaceSettings(trx, p.advertiserId);
      const first = { ...(row as PlanRow), second_approval_above_minor: secondApprovalAboveMinor };
      return { plan: await toPlan(trx, p, first, campaign), campaign, approvedSnapshot: null };
    }
    if (input.expectedVersion !== existing.version) {
      throw conflict(`The plan is at version ${existing.version}; send that as expectedVersion.`, 'version_conflict');
    }
    const [row] = await trx<PlanRow>('plans')
      .where({ id: existing.id, version: existing.version })
      .update({
        lines: JSON.stringify(lines),
        version: existing.version + 1,
        status: 'draft',
        approved_snapshot: null,
        approved_digest: null,
        approved_by: null,
        approved_at: null,
        approvals: JSON.stringify([]),
        updated_at: trx.fn.now(),
      } as never)
      .returning('*');
    if (campaign.status === 'approved') await setCampaignStatus(trx, campaign.id, 'draft');
    const kept = { second_approval_above_minor: existing.second_approval_above_minor };
    return { plan: await toPlan(trx, p, { ...(row as PlanRow), ...kept }, campaign), campaign, approvedSnapshot: null };
  });
}

/**
 * A person with `plan:approve` approves the exact snapshot of campaign and plan; its SHA-256
 * digest binds the launch to it. Above the workspace's second-approval amount the snapshot needs
 * two different people: the first approval is kept on the plan (still `draft`), the second makes
 * it `approved`. Approving again what is already approved and current changes nothing.
 */
export async function approvePlan(db: Knex, p: Principal, campaignId: string, expectedVersion: number): Promise<StoredPlan> {
  assertMayApprovePlan(p);
  return db.transaction(async (trx) => {
    const campaign = await findCampaign(trx, p, campaignId, { forUpdate: true });
    if (!campaign) throw notFound();
    const existing = await loadPlanRow(trx, { campaign_id: campaign.id }, { forUpdate: true });
    if (!existing) throw notFound();
    if (existing.version !== expectedVersion) {
      throw conflict(`The plan is at version ${existing.version}; review it and approve that version.`, 'version_conflict');
    }
    await refuseIfBooked(trx, campaign.id);
    await refuseEndedFlight(trx, campaign);
    const snapshot = await currentSnapshot(trx, p, campaign, existing);
    const digest = digestOf(snapshot);
    const kept = { second_approval_above_minor: existing.second_approval_above_minor };
    if (existing.status === 'approved' && existing.approved_digest === digest) {
      return { plan: await toPlan(trx, p, existing, campaign), campaign, approvedSnapshot: snapshot };
    }
    const required = approvalsRequired(campaign.maximumCommitmentMinor, secondApprovalAbove(existing));
    // Approvals count for the snapshot they were given to: a creative revised since starts again.
    const earlier = (existing.approvals ?? []).filter((a) => a.digest === digest);
    if (earlier.some((a) => a.userId === p.userId)) {
      throw conflict(
        `You have approved this plan already. Its maximum commitment is above the workspace's second-approval amount, so another person with plan:approve must approve it too.`,
        'second_approver_required',
        'terminal',
      );
    }
    const approvals: PlanApproval[] = [...earlier, { userId: p.userId, approvedAt: new Date().toISOString(), digest }];
    const complete = approvals.length >= required;
    const [row] = await trx<PlanRow>('plans')
      .where({ id: existing.id, version: existing.version })
      .update(
        (complete
          ? {
              status: 'approved',
              approved_snapshot: JSON.stringify(snapshot),
              approved_digest: digest,
              approved_by: p.userId,
              approved_at: trx.fn.now(),
              approvals: JSON.stringify(approvals),
              updated_at: trx.fn.now(),
            }
          : { approvals: JSON.stringify(approvals), updated_at: trx.fn.now() }) as never,
      )
      .returning('*');
    const approved = complete && campaign.status === 'draft';
    if (approved) await setCampaignStatus(trx, campaign.id, 'approved');
    const refreshed = { ...campaign, status: approved ? 'approved' : campaign.status };
    return {
      plan: await toPlan(trx, p, { ...(row as PlanRow), ...kept }, refreshed),
      campaign: refreshed,
      approvedSnapshot: complete ? snapshot : null,
    };
  });
}
