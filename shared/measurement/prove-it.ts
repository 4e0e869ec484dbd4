import { randomUUID } from 'node:crypto';
import type { Knex } from 'knex';
import { z } from 'zod';
import { Problem, badRequest, notFound, type ProblemIssue } from '../errors';
import { isUuid } from '../ids';
import { callerId, type Principal } from '../auth/principal';
import { loadPanel, requireCampaign } from './outcomes';
import { evaluateDesign, type Refusal } from './geo-lift';
import {
  DesignDate,
  defaultExposureEnd,
  designById,
  designForKey,
  designView,
  normalise,
  registerDesign,
  type DesignRow,
  type DesignSettings,
  type GeoLiftDesign,
} from './geo-lift-designs';

export const DEFAULT_TEST_MARKET = 'london';
export const DEFAULT_EXPECTED_LIFT_PCT = 15;

export const ProveItSchema = z
  .strictObject({
    designId: z.string().min(1).max(128).optional().describe('A registered design of this campaign (GET .../geo-lift-designs).'),
    testMarket: z.string().min(1).max(200).optional().describe('Default london.'),
    expectedLiftPct: z.number().gt(0).max(1000).optional().describe('Default 15 when the request registers the design.'),
    exposureStart: DesignDate.optional().describe("Default the campaign's start date."),
  })
  .meta({ id: 'ProveIt' });
export type ProveItRequest = z.infer<typeof ProveItSchema>;

interface EvidenceRow {
  id: string;
  campaign_id: string;
  design_id: string | null;
  look: 'interim' | 'final' | null;
  method: string;
  design: Record<string, unknown>;
  result: Record<string, unknown>;
  created_by: string;
  created_at: Date;
}

const evidenceView = (r: EvidenceRow) => ({
  id: r.id,
  campaignId: r.campaign_id,
  designId: r.design_id,
  look: r.look,
  ...r.result,
  design: r.design,
  createdBy: r.created_by,
  createdAt: r.created_at.toISOString(),
});
export type LiftEvidence = ReturnType<typeof evidenceView>;

export type ProveItOutcome =
  | { refused: Refusal }
  /** The request registered its design; there is nothing to evaluate before exposure. */
  | { registered: GeoLiftDesign }
  | { evidence: LiftEvidence; replayed: boolean };

const today = () => new Date().toISOString().slice(0, 10);

/** A request that names a registered design and asks for something else cannot buy a different answer. */
function requireSameDesign(design: DesignRow, body: ProveItRequest) {
  const r = design.request;
  const changed: ProblemIssue[] = [];
  if (body.testMarket !== undefined && body.testMarket !== r.testMarket)
    changed.push({ path: 'body.testMarket', message: `registered as ${r.testMarket}` });
  if (body.exposureStart !== undefined && body.exposureStart !== r.exposureStart) {
    changed.push({ path: 'body.exposureStart', message: `registered as ${r.exposureStart}` });
  }
  if (body.expectedLiftPct !== undefined && body.expectedLiftPct !== r.expectedLiftPct) {
    changed.push({ path: 'body.expectedLiftPct', message: `registered as ${r.expectedLiftPct}` });
  }
  if (changed.length) {
    throw new Problem(
      409,
      'design_mismatch',
      'Conflict',
      `Design ${design.id} was registered before exposure and is evaluated as registered; this request changes it.`,
      'correctable',
      changed,
    );
  }
}

async function finalEvidence(db: Knex, designId: string) {
  return (await db('lift_evidence').where({ design_id: designId, look: 'final' }).first()) as EvidenceRow | undefined;
}

/**
 * Evaluates causal lift against a registered design. The spec's body names the design by test
 * market and exposure start (the metric is PROVE_IT_METRIC), or registers it when none exists
 * and no exposure data is stored yet. An underpowered design is refused as it was at
 * registration; before the registered end a look is interim and claims nothing; the final
 * evaluation happens once and every later request reads it again.
 */
export async function proveIt(
  db: Knex,
  p: Principal,
  campaignId: string,
  body: ProveItRequest,
  s: DesignSettings,
): Promise<ProveItOutcome> {
  const campaign = await requireCampaign(db, p, campaignId);
  let design: DesignRow | undefined;
  if (body.designId !== undefined) {
    design = isUuid(body.designId) ? await designById(db, campaignId, body.designId) : undefined;
    if (!design) throw notFound();
  } else {
    const testMarket = body.testMarket ?? DEFAULT_TEST_MARKET;
    const exposureStart = body.exposureStart ?? campaign.startDate;
    if (!DesignDate.safeParse(exposureStart).success) {
      throw badRequest(`The campaign's start date ${exposureStart} cannot start a design; send exposureStart.`, [
        { path: 'body.exposureStart', message: 'required for this campaign' },
      ]);
    }
    design = await designForKey(db, campaignId, testMarket, s.PROVE_IT_METRIC, exposureStart);
    if (!design) {
      const request = normalise(
        {
          testMarket,
          exposureStart,
          exposureEnd: defaultExposureEnd(exposureStart, campaign.endDate),
          expectedLiftPct: body.expectedLiftPct ?? DEFAULT_EXPECTED_LIFT_PCT,
        },
        s,
      );
      const registration = await registerDesign(db, p, campaignId, request, s);
      if (registration.kind === 'refused' || registration.kind === 'underpowered') return { refused: registration.refusal };
      return { registered: registration.design };
    }
  }
  requireSameDesign(design, body);
  if (design.status === 'underpowered') {
    return { refused: { ...design.refusal!, figures: { ...design.refusal!.figures, designId: design.id, metric: design.metric } } };
  }
  const done = await finalEvidence(db, design.id);
  if (done) return { evidence: evidenceView(done), replayed: true };

  const panel = await loadPanel(
    db,
    campaignId,
    design.metric,
    s.GEO_MARKETS.map((m) => m.id),
  );
  const outcome = evaluateDesign(panel, { ...design.request, controlMarkets: design.control_markets }, today());
  if ('refused' in outcome) {
    return { refused: { ...outcome.refused, figures: { designId: design.id, metric: design.metric, ...outcome.refused.figures } } };
  }
  const { look, ...result } = outcome.result;
  const inserted = (await db.raw(
    `${db('lift_evidence')
      .insert({
        id: randomUUID(),
        advertiser_id: p.advertiserId,
        campaign_id: campaignId,
        design_id: design.id,
        look,
        method: result.method,
        design: JSON.stringify(designView(design)),
        result: JSON.stringify(result),
        created_by: callerId(p),
      })
      .toQuery()} on conflict (design_id) where look = 'final' do nothing returning *`,
  )) as { rows: EvidenceRow[] };
  // A concurrent request made the final evaluation first: this one reads it.
  if (!inserted.rows.length) return { evidence: evidenceView((await finalEvidence(db, design.id))!), replayed: true };
  return { evidence: evidenceView(inserted.rows[0]!), replayed: false };
}

export async function listEvidence(db: Knex, p: Principal, campaignId: string) {
  await requireCampaign(db, p, campaignId);
  const rows = (await db('lift_evidence')
    .where({ campaign_id: campaignId })
    .orderBy([
      { column: 'created_at', order: 'desc' },
      { column: 'id', order: 'desc' },
    ])
    .limit(100)) as EvidenceRow[];
  return { evidence: rows.map(evidenceView) };
}

export async function readEvidence(db: Knex, p: Principal, id: string) {
  if (!isUuid(id)) throw notFound();
  const row = (await db('lift_evidence').where({ id, advertiser_id: p.advertiserId }).first()) as EvidenceRow | undefined;
  if (!row) throw notFound();
  // Evidence is as visible as its campaign (tenant and channel scope).
  await requireCampaign(db, p, row.campaign_id);
  return { evidence: evidenceView(row) };
}
