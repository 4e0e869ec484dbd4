import { randomUUID } from 'node:crypto';
import type { Knex } from 'knex';
import { firstPrepared, toMinor } from '../db/knex';
import type { Principal } from '../auth/principal';
import { withinScope } from '../auth/scope';
import type { Channel } from '../auth/products';
import type { Campaign, CreateCampaign } from './campaign-schemas';
import { dateOnly } from '../dates';
import { refuseEndedFlight } from './flight';

interface CampaignRow {
  id: string;
  advertiser_id: string;
  name: string;
  client_name: string;
  start_date: string | Date;
  end_date: string | Date;
  budget_minor: string;
  maximum_commitment_minor: string;
  currency: string;
  channels: Channel[];
  execution_mode: 'sandbox' | 'live';
  daily_cap_minor: string | null;
  status: string;
  version: number;
  created_at: Date;
  updated_at: Date;
}

export function toCampaign(r: CampaignRow): Campaign {
  return {
    id: r.id,
    advertiserId: r.advertiser_id,
    name: r.name,
    clientName: r.client_name,
    startDate: dateOnly(r.start_date),
    endDate: dateOnly(r.end_date),
    budgetMinor: toMinor(r.budget_minor),
    maximumCommitmentMinor: toMinor(r.maximum_commitment_minor),
    currency: 'GBP',
    channels: r.channels,
    executionMode: r.execution_mode,
    dailyCapMinor: r.daily_cap_minor === null ? null : toMinor(r.daily_cap_minor),
    status: r.status,
    version: r.version,
    createdAt: r.created_at.toISOString(),
    updatedAt: r.updated_at.toISOString(),
  };
}

/** A campaign is visible only to its advertiser, and only when all its channels are within the caller's (the scope rule). */
export function inScope(
  p: Pick<Principal, 'advertiserId' | 'channels'>,
  c: { advertiserId: string; channels: readonly string[] },
): boolean {
  return c.advertiserId === p.advertiserId && withinScope(p, c.channels);
}

export async function createCampaign(db: Knex, p: Principal, input: CreateCampaign, defaultMode: 'sandbox' | 'live'): Promise<Campaign> {
  await refuseEndedFlight(db, { advertiserId: p.advertiserId, executionMode: input.executionMode ?? defaultMode, endDate: input.endDate });
  const [row] = await db<CampaignRow>('campaigns')
    .insert({
      id: randomUUID(),
      advertiser_id: p.advertiserId,
      name: input.name,
      client_name: input.clientName,
      start_date: input.startDate,
      end_date: input.endDate,
      budget_minor: String(input.budgetMinor),
      maximum_commitment_minor: String(input.maximumCommitmentMinor),
      channels: input.channels,
      execution_mode: input.executionMode ?? defaultMode,
      daily_cap_minor: input.dailyCapMinor === undefined ? null : String(input.dailyCapMinor),
      created_by: p.userId,
    } as never)
    .returning('*');
  return toCampaign(row as CampaignRow);
}

/** The caller's campaign, or null when it does not exist, is another tenant's, or is outside the caller's channels. */
export async function findCampaign(db: Knex, p: Principal, id: string, opts: { forUpdate?: boolean } = {}): Promise<Campaign | null> {
  const q = db<CampaignRow>('campaigns').where({ id, advertiser_id: p.advertiserId }).select('*');
  if (opts.forUpdate) q.forUpdate();
  // Prepared: read by nearly every request about a campaign.
  const row = await firstPrepared<CampaignRow>(db, q);
  if (!row) return null;
  const campaign = toCampaign(row);
  return inScope(p, campaign) ? campaign : null;
}

export async function listCampaigns(db: Knex, p: Principal, limit: number): Promise<Campaign[]> {
  const rows = (await db<CampaignRow>('campaigns')
    .where({ advertiser_id: p.advertiserId })
    .whereRaw('channels <@ ?::text[]', [p.channels])
    .orderBy([
      { column: 'created_at', order: 'desc' },
      { column: 'id', order: 'desc' },
    ])
    .limit(limit)) as CampaignRow[];
  return rows.map(toCampaign);
}

/** The campaign's status change as an UPDATE, to run or to embed in a larger statement. */
export const campaignStatusUpdate = (trx: Knex, id: string, status: string) =>
  trx('campaigns')
    .where({ id })
    .update({ status, version: trx.raw('version + 1'), updated_at: trx.fn.now() });

export async function setCampaignStatus(trx: Knex, id: string, status: string): Promise<void> {
  await campaignStatusUpdate(trx, id, status);
}
