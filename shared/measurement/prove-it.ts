import { randomUUID } from 'node:crypto';
import type { Knex } from 'knex';
import { z } from 'zod';
import { notFound } from '../errors';
import { isUuid } from '../ids';
import type { Principal } from '../auth/principal';
import type { Config } from '../config';
import { CalendarDate, requireCampaign } from './outcomes';
import { evaluateGeoLift, type GeoLiftResult, type Refusal } from './geo-lift';

export const ProveItSchema = z
  .strictObject({
    testMarket: z.string().min(1).max(200).default('london'),
    expectedLiftPct: z.number().gt(0).default(15),
    exposureStart: CalendarDate.optional(),
  })
  .meta({ id: 'ProveIt' });
export type ProveItRequest = z.infer<typeof ProveItSchema>;

type Settings = Pick<
  Config,
  'GEO_MARKETS' | 'PROVE_IT_METRIC' | 'PROVE_IT_ALPHA' | 'PROVE_IT_MIN_PRE_DAYS' | 'PROVE_IT_MIN_CONTROL_MARKETS'
>;

interface EvidenceRow {
  id: string;
  campaign_id: string;
  method: string;
  design: GeoLiftResult['design'];
  result: Omit<GeoLiftResult, 'design'>;
  created_by: string;
  created_at: Date;
}

const evidenceView = (r: EvidenceRow) => ({
  id: r.id,
  campaignId: r.campaign_id,
  ...r.result,
  design: r.design,
  createdBy: r.created_by,
  createdAt: r.created_at.toISOString(),
});
export type LiftEvidence = ReturnType<typeof evidenceView>;

/**
 * Evaluates causal lift in the test market from the campaign's imported outcomes. Refuses,
 * without storing anything, when the data is too thin or the design cannot detect the
 * expected lift; otherwise stores the result as evidence the advertiser can read again.
 */
export async function proveIt(
  db: Knex,
  p: Principal,
  campaignId: string,
  body: ProveItRequest,
  s: Settings,
): Promise<{ refused: Refusal } | { evidence: LiftEvidence }> {
  const campaign = await requireCampaign(db, p, campaignId);
  const exposureStart = body.exposureStart ?? campaign.startDate;
  const rows = await db.raw(
    `select to_char(date, 'YYYY-MM-DD') as date, market, value from campaign_outcomes where campaign_id = ? and metric = ?`,
    [campaignId, s.PROVE_IT_METRIC],
  );
  const byDate = new Map<string, Map<string, number>>();
  for (const r of rows.rows as Array<{ date: string; market: string; value: number }>) {
    if (!byDate.has(r.date)) byDate.set(r.date, new Map());
    byDate.get(r.date)!.set(r.market, Number(r.value));
  }
  const outcome = evaluateGeoLift(
    { byDate, knownMarkets: s.GEO_MARKETS.map((m) => m.id) },
    {
      testMarket: body.testMarket,
      expectedLiftPct: body.expectedLiftPct,
      exposureStart,
      alpha: s.PROVE_IT_ALPHA,
      minPreDays: s.PROVE_IT_MIN_PRE_DAYS,
      minControlMarkets: s.PROVE_IT_MIN_CONTROL_MARKETS,
    },
  );
  if ('refused' in outcome) return { refused: { ...outcome.refused, figures: { metric: s.PROVE_IT_METRIC, ...outcome.refused.figures } } };
  const { design, ...result } = outcome.result;
  const [row] = await db('lift_evidence')
    .insert({
      id: randomUUID(),
      advertiser_id: p.advertiserId,
      campaign_id: campaignId,
      method: result.method,
      design: JSON.stringify({ ...design, metric: s.PROVE_IT_METRIC }),
      result: JSON.stringify(result),
      created_by: p.agentClientId ? `${p.userId}|agent:${p.agentClientId}` : p.userId,
    })
    .returning('*');
  return { evidence: evidenceView(row as EvidenceRow) };
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
