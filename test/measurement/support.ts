import { randomUUID } from 'node:crypto';
import type { TestApi, TestEnv } from '../support/api';
import { draftCampaign, post } from '../support/bookings';
import { panelRows, type SyntheticPanel } from './synthetic';

/** A draft sandbox campaign of the caller's (dates and other fields may be overridden); returns its id. */
export async function campaignOf(api: TestApi, token: string, overrides: Record<string, unknown> = {}): Promise<string> {
  const { campaignId } = await draftCampaign(api, token, [{ channel: 'ctv', adapterKey: 'sandbox-ctv', budgetMinor: 10_000 }], overrides);
  return campaignId;
}

export function sendOutcomes(
  api: TestApi,
  token: string,
  campaignId: string,
  body: string | Buffer,
  contentType = 'application/json',
  headers: Record<string, string> = {},
) {
  return api.fetch(`/api/v1/campaigns/${campaignId}/outcomes`, {
    method: 'POST',
    token,
    headers: { 'content-type': contentType, 'idempotency-key': randomUUID(), ...headers },
    body,
  });
}

export const rowsJson = (rows: unknown[]) => JSON.stringify({ rows });

/** Imports the panel's outcomes of the days in [from, to] (either open), or only those of `markets`. */
export async function importPanel(
  api: TestApi,
  token: string,
  campaignId: string,
  p: SyntheticPanel,
  range: { from?: string; to?: string; markets?: string[] } = {},
) {
  const rows = panelRows(p, 'conversions', range.from, range.to).filter((r) => !range.markets || range.markets.includes(r.market));
  const res = await sendOutcomes(api, token, campaignId, rowsJson(rows));
  if (res.status !== 201) throw new Error(`import failed: ${res.status} ${await res.text()}`);
}

/** The registration body of a panel's design: london, its exposure weeks, the rest as given. */
export const designBody = (p: SyntheticPanel, extra: Record<string, unknown> = {}) => ({
  testMarket: 'london',
  exposureStart: p.exposureStart,
  exposureEnd: p.exposureEnd,
  expectedLiftPct: 10,
  ...extra,
});

export const registerDesign = (api: TestApi, token: string, campaignId: string, body: unknown) =>
  post(api, token, `/api/v1/campaigns/${campaignId}/geo-lift-designs`, body);

/** Every stored outcome, batch, design and evaluation, to prove that a refused request changed nothing. */
export async function measurementState(env: TestEnv) {
  const [outcomes, batches, evidence, designs] = await Promise.all([
    env.db('campaign_outcomes').orderBy('id').select('campaign_id', 'date', 'market', 'metric', 'value', 'batch_id'),
    env.db('outcome_import_batches').orderBy('id').select('id', 'row_count', 'replaced_count'),
    env.db('lift_evidence').orderBy('id').select('id', 'design_id', 'look', 'result'),
    env.db('geo_lift_designs').orderBy('id').select('*'),
  ]);
  return { outcomes, batches, evidence, designs };
}

/** A problem body without its request id: what must be identical between two 404s. */
export const withoutRequestId = (b: Record<string, unknown>) => {
  const { requestId: _r, ...rest } = b;
  return rest;
};
