import { randomUUID } from 'node:crypto';
import type { TestApi, TestEnv } from '../support/api';
import { draftCampaign } from '../support/bookings';

/** A draft sandbox campaign of the caller's; returns its id. */
export async function campaignOf(api: TestApi, token: string): Promise<string> {
  const { campaignId } = await draftCampaign(api, token, [{ channel: 'ctv', adapterKey: 'sandbox-ctv', budgetMinor: 10_000 }]);
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

/** Every stored outcome and batch, to prove that a refused request changed nothing. */
export async function measurementState(env: TestEnv) {
  const [outcomes, batches, evidence] = await Promise.all([
    env.db('campaign_outcomes').orderBy('id').select('campaign_id', 'date', 'market', 'metric', 'value', 'batch_id'),
    env.db('outcome_import_batches').orderBy('id').select('id', 'row_count', 'replaced_count'),
    env.db('lift_evidence').orderBy('id').select('id'),
  ]);
  return { outcomes, batches, evidence };
}

/** A problem body without its request id: what must be identical between two 404s. */
export const withoutRequestId = (b: Record<string, unknown>) => {
  const { requestId: _r, ...rest } = b;
  return rest;
};
