import { randomUUID } from 'node:crypto';
import type { Knex } from 'knex';
import { z } from 'zod';
import { Problem, type ProblemIssue } from '../errors';
import type { Principal } from '../auth/principal';
import { CalendarDate, OUTCOME_METRICS, loadPanel, lockCampaignOutcomes, requireCampaign } from './outcomes';
import { addDays, daysFrom } from '../dates';
import { checkDesign, type DesignCheck, type DesignInput, type Refusal } from './geo-lift';
import { DAYS_PER_WEEK, MAX_WEEKS, type Alternative } from './tbr';

/** The settings a design reads (part of the one config schema; structural, so this module needs no config import). */
export interface DesignSettings {
  GEO_MARKETS: ReadonlyArray<{ id: string }>;
  PROVE_IT_METRIC: string;
  PROVE_IT_ALPHA: number;
  PROVE_IT_FIT_WEEKS: number;
  PROVE_IT_MIN_DESIGN_WEEKS: number;
  PROVE_IT_MIN_CONTROL_MARKETS: number;
  PROVE_IT_MIN_CORRELATION: number;
}

const MarketId = z.string().min(1).max(64);

/** A calendar day within years the database and the week arithmetic both hold. */
export const DesignDate = CalendarDate.refine((d) => d >= '1900-01-01' && d <= '2999-12-31', 'a day from 1900-01-01 to 2999-12-31');

export const RegisterGeoLiftDesignSchema = z
  .strictObject({
    testMarket: MarketId.describe('The market the campaign runs in (see GET /api/v1/measurement/markets).'),
    controlMarkets: z
      .array(MarketId)
      .min(1)
      .max(100)
      .refine((ms) => new Set(ms).size === ms.length, 'control markets must be distinct')
      .optional()
      .describe('Default: every other market with outcomes on every day of the design window.'),
    metric: z.enum(OUTCOME_METRICS).optional().describe('Default: the configured PROVE_IT_METRIC.'),
    exposureStart: DesignDate.describe('The first day of exposure.'),
    exposureEnd: DesignDate.describe('The last day of exposure: the exposure is 1..52 whole weeks.'),
    fitWeeks: z.number().int().min(4).max(MAX_WEEKS).optional().describe('Whole weeks right before exposure to fit on; default 8.'),
    expectedLiftPct: z.number().gt(0).max(1000).describe('The lift the campaign is expected to cause, in %.'),
    alpha: z.number().gt(0).max(0.2).optional().describe('Significance level; default PROVE_IT_ALPHA.'),
    power: z.number().min(0.5).max(0.99).optional().describe('Power at the expected lift; default 0.8.'),
    alternative: z.enum(['two-sided', 'greater']).optional().describe('`greater` tests for a lift only; default two-sided.'),
  })
  .superRefine((d, ctx) => {
    const days = daysFrom(d.exposureStart, d.exposureEnd) + 1;
    if (days < DAYS_PER_WEEK || days % DAYS_PER_WEEK !== 0 || days > MAX_WEEKS * DAYS_PER_WEEK) {
      ctx.addIssue({
        code: 'custom',
        path: ['exposureEnd'],
        message: `the exposure must be 1..${MAX_WEEKS} whole weeks: exposureEnd is exposureStart + 7·k − 1 (here ${days} day(s))`,
      });
    }
    if (d.controlMarkets?.includes(d.testMarket)) {
      ctx.addIssue({ code: 'custom', path: ['controlMarkets'], message: 'the test market cannot be its own control' });
    }
  })
  .meta({ id: 'RegisterGeoLiftDesign' });
export type RegisterGeoLiftDesign = z.infer<typeof RegisterGeoLiftDesignSchema>;

/** The request with every default applied: two registrations are the same when these are equal. */
export interface NormalisedDesign {
  testMarket: string;
  controlMarkets: string[] | null;
  metric: string;
  exposureStart: string;
  exposureEnd: string;
  fitWeeks: number;
  expectedLiftPct: number;
  alpha: number;
  power: number;
  alternative: Alternative;
}

export function normalise(r: RegisterGeoLiftDesign, s: DesignSettings): NormalisedDesign {
  return {
    testMarket: r.testMarket,
    controlMarkets: r.controlMarkets ? [...r.controlMarkets].sort() : null,
    metric: r.metric ?? s.PROVE_IT_METRIC,
    exposureStart: r.exposureStart,
    exposureEnd: r.exposureEnd,
    fitWeeks: r.fitWeeks ?? s.PROVE_IT_FIT_WEEKS,
    expectedLiftPct: r.expectedLiftPct,
    alpha: r.alpha ?? s.PROVE_IT_ALPHA,
    power: r.power ?? 0.8,
    alternative: r.alternative ?? 'two-sided',
  };
}

const FIELDS = [
  'testMarket',
  'controlMarkets',
  'metric',
  'exposureStart',
  'exposureEnd',
  'fitWeeks',
  'expectedLiftPct',
  'alpha',
  'power',
  'alternative',
] as const;
const differences = (a: NormalisedDesign, b: NormalisedDesign) => FIELDS.filter((f) => JSON.stringify(a[f]) !== JSON.stringify(b[f]));

export interface DesignRow {
  id: string;
  campaign_id: string;
  status: 'registered' | 'underpowered';
  test_market: string;
  metric: string;
  request: NormalisedDesign;
  control_markets: string[];
  check: DesignCheck;
  refusal: Refusal | null;
  registered_by: string;
  agent_client_id: string | null;
  created_at: Date;
}

export const designView = (r: DesignRow) => {
  const { controlMarkets: _named, ...request } = r.request;
  const { controlMarkets: _resolved, ...check } = r.check;
  return {
    id: r.id,
    campaignId: r.campaign_id,
    status: r.status,
    ...request,
    controlMarkets: r.control_markets,
    controlMarketsNamed: r.request.controlMarkets !== null,
    check,
    refusal: r.refusal ? { code: r.refusal.code, reason: r.refusal.reason, detail: r.refusal.detail } : null,
    registeredBy: r.registered_by,
    agentClientId: r.agent_client_id,
    createdAt: r.created_at.toISOString(),
  };
};
export type GeoLiftDesign = ReturnType<typeof designView>;

export type Registration =
  | { kind: 'created' | 'existing'; design: GeoLiftDesign }
  /** Refused by the power gate: stored, so the same test cannot be asked again with a rosier expectation. */
  | { kind: 'underpowered'; design: GeoLiftDesign; refusal: Refusal }
  /** Refused for thin data or a failed model check: nothing is stored. */
  | { kind: 'refused'; refusal: Refusal };

const underpowered = (row: DesignRow): Registration => ({
  kind: 'underpowered',
  design: designView(row),
  refusal: { ...row.refusal!, figures: { ...row.refusal!.figures, designId: row.id, metric: row.metric } },
});

/** The registered design of a campaign's test market, metric and exposure start, else its latest refused attempt. */
export async function designForKey(db: Knex, campaignId: string, testMarket: string, metric: string, exposureStart: string) {
  return (await db('geo_lift_designs')
    .where({ campaign_id: campaignId, test_market: testMarket, metric })
    .whereRaw(`exposure_start = ?::date`, [exposureStart])
    .orderByRaw(`status = 'registered' desc, created_at desc, id desc`)
    .first()) as DesignRow | undefined;
}

export async function designById(db: Knex, campaignId: string, id: string) {
  return (await db('geo_lift_designs').where({ id, campaign_id: campaignId }).first()) as DesignRow | undefined;
}

const issue = (field: string, message: string): ProblemIssue => ({ path: `body.${field}`, message });
const conflict = (detail: string, code: string, errors?: ProblemIssue[]) =>
  new Problem(409, code, 'Conflict', detail, 'correctable', errors);

/**
 * The power target (expected lift, α, power, sidedness) of a campaign's test market and metric
 * may only get stricter: asking again with a rosier one cannot turn a refusal into a test.
 */
async function requireNoLooserTarget(trx: Knex, campaignId: string, d: NormalisedDesign) {
  const prior = await trx('geo_lift_designs')
    .where({ campaign_id: campaignId, test_market: d.testMarket, metric: d.metric })
    .first(
      trx.raw('min(expected_lift_pct) as "expectedLiftPct"'),
      trx.raw('min(alpha) as alpha'),
      trx.raw('max(power) as power'),
      trx.raw(`bool_or(alternative = 'two-sided') as "twoSided"`),
    );
  if (prior?.expectedLiftPct === null || prior?.expectedLiftPct === undefined) return;
  const looser: ProblemIssue[] = [];
  if (d.expectedLiftPct > prior.expectedLiftPct) {
    looser.push(issue('expectedLiftPct', `already stated as ${prior.expectedLiftPct}%; it may not be raised`));
  }
  if (d.alpha > prior.alpha) looser.push(issue('alpha', `already stated as ${prior.alpha}; it may not be raised`));
  if (d.power < prior.power) looser.push(issue('power', `already stated as ${prior.power}; it may not be lowered`));
  if (prior.twoSided && d.alternative !== 'two-sided') looser.push(issue('alternative', 'already stated as two-sided'));
  if (looser.length) {
    throw conflict(
      `A design for ${d.testMarket} (${d.metric}) in this campaign already stated a stricter power target; a new design may keep it or make it stricter, never looser.`,
      'power_target_relaxed',
      looser,
    );
  }
}

/**
 * Registers a geo-lift design before exposure: checks it on the design window (thin data and
 * failed model checks are refused and not stored; an underpowered design is stored as refused),
 * then keeps it, immutable. Repeating an identical registration returns what was stored.
 */
export async function registerDesign(
  db: Knex,
  p: Principal,
  campaignId: string,
  d: NormalisedDesign,
  s: DesignSettings,
): Promise<Registration> {
  await requireCampaign(db, p, campaignId);
  const known = s.GEO_MARKETS.map((m) => m.id);
  const refuse = (reason: string, detail: string, figures: Record<string, unknown>): Registration => ({
    kind: 'refused',
    refusal: { code: 'insufficient_data', reason, detail, figures: { expectedLiftPct: d.expectedLiftPct, metric: d.metric, ...figures } },
  });
  if (!known.includes(d.testMarket)) {
    return refuse('unknown_test_market', `${d.testMarket} is not a configured market.`, { markets: known });
  }
  const unknownControls = (d.controlMarkets ?? []).filter((m) => !known.includes(m));
  if (unknownControls.length) {
    return refuse('unknown_control_markets', `${unknownControls.join(', ')} is not a configured market.`, {
      unknownControlMarkets: unknownControls,
      markets: known,
    });
  }
  return db.transaction(async (trx) => {
    // Registrations of one campaign are decided one at a time, and no import lands while one is:
    // the checks below read what earlier registrations and imports stored.
    await lockCampaignOutcomes(trx, campaignId, 'register');
    const existing = await designForKey(trx, campaignId, d.testMarket, d.metric, d.exposureStart);
    if (existing?.status === 'registered') {
      const changed = differences(existing.request, d);
      if (!changed.length) return { kind: 'existing', design: designView(existing) } as Registration;
      throw conflict(
        `Design ${existing.id} is registered for ${d.testMarket} (${d.metric}) from ${d.exposureStart} and cannot be changed.`,
        'design_registered',
        changed.map((f) => issue(f, `registered as ${JSON.stringify(existing.request[f])}`)),
      );
    }
    const attempts = (await trx('geo_lift_designs')
      .where({ campaign_id: campaignId, test_market: d.testMarket, metric: d.metric })
      .whereRaw(`exposure_start = ?::date`, [d.exposureStart])) as DesignRow[];
    const same = attempts.find((a) => !differences(a.request, d).length);
    if (same) return underpowered(same);
    await requireNoLooserTarget(trx, campaignId, d);
    const overlapping = (await trx('geo_lift_designs')
      .where({ campaign_id: campaignId, test_market: d.testMarket, metric: d.metric, status: 'registered' })
      .whereRaw('exposure_start <= ?::date and exposure_end >= ?::date', [d.exposureEnd, d.exposureStart])
      .first('id')) as { id: string } | undefined;
    if (overlapping) {
      throw conflict(
        `Design ${overlapping.id} already measures ${d.testMarket} (${d.metric}) over part of ${d.exposureStart}..${d.exposureEnd}; two tests of the same days would be two chances at one answer.`,
        'design_overlaps',
      );
    }
    const seen = await trx.raw(
      `select to_char(min(date), 'YYYY-MM-DD') as first from campaign_outcomes where campaign_id = ? and metric = ? and date >= ?::date`,
      [campaignId, d.metric, d.exposureStart],
    );
    const first = (seen.rows[0] as { first: string | null }).first;
    if (first) {
      throw conflict(
        `Outcomes dated ${first}, on or after the exposure start ${d.exposureStart}, are already stored: a design is registered before the data it will be judged on.`,
        'exposure_data_present',
      );
    }
    const panel = await loadPanel(trx, campaignId, d.metric, known);
    if (panel.byDate.size === 0) return refuse('no_outcomes', `No ${d.metric} outcomes have been imported for this campaign.`, {});
    const input: DesignInput = { ...d, controlMarkets: d.controlMarkets ?? undefined };
    const outcome = checkDesign(panel, input, {
      minDesignWeeks: s.PROVE_IT_MIN_DESIGN_WEEKS,
      minControlMarkets: s.PROVE_IT_MIN_CONTROL_MARKETS,
      minCorrelation: s.PROVE_IT_MIN_CORRELATION,
    });
    if ('refused' in outcome) {
      return {
        kind: 'refused',
        refusal: { ...outcome.refused, figures: { metric: d.metric, ...outcome.refused.figures } },
      } as Registration;
    }
    const [row] = (await trx('geo_lift_designs')
      .insert({
        id: randomUUID(),
        advertiser_id: p.advertiserId,
        campaign_id: campaignId,
        status: 'underpowered' in outcome ? 'underpowered' : 'registered',
        test_market: d.testMarket,
        metric: d.metric,
        exposure_start: d.exposureStart,
        exposure_end: d.exposureEnd,
        request: JSON.stringify(d),
        control_markets: JSON.stringify(outcome.check.controlMarkets),
        expected_lift_pct: d.expectedLiftPct,
        alpha: d.alpha,
        power: d.power,
        alternative: d.alternative,
        check: JSON.stringify(outcome.check),
        refusal: 'underpowered' in outcome ? JSON.stringify(outcome.underpowered) : null,
        registered_by: p.userId,
        agent_client_id: p.agentClientId,
      })
      .returning('*')) as DesignRow[];
    return 'underpowered' in outcome ? underpowered(row!) : ({ kind: 'created', design: designView(row!) } as Registration);
  });
}

export async function listDesigns(db: Knex, p: Principal, campaignId: string) {
  await requireCampaign(db, p, campaignId);
  const rows = (await db('geo_lift_designs')
    .where({ campaign_id: campaignId })
    .orderBy([
      { column: 'created_at', order: 'desc' },
      { column: 'id', order: 'desc' },
    ])
    .limit(100)) as DesignRow[];
  return { designs: rows.map(designView) };
}

/** The exposure a spec body implies: whole weeks from its start within the campaign's dates (at least one). */
export function defaultExposureEnd(exposureStart: string, campaignEnd: string): string {
  const weeks = Math.min(MAX_WEEKS, Math.max(1, Math.floor((daysFrom(exposureStart, campaignEnd) + 1) / DAYS_PER_WEEK)));
  return addDays(exposureStart, weeks * DAYS_PER_WEEK - 1);
}
