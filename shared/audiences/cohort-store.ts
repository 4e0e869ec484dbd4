import type { Knex } from 'knex';
import type { Principal } from '../auth/principal';
import { findCampaign } from '../campaigns/campaign-store';
import type { AttemptStatus, Cohort, CohortAttempt, CohortDefinition, CohortState } from './cohort-schemas';

export interface CohortRow {
  id: string;
  advertiser_id: string;
  campaign_id: string;
  definition: CohortDefinition;
  estimated_size: string | number;
  revision: number;
  state: CohortState;
  created_by: string;
  created_at: Date;
  updated_at: Date;
}

export interface AttemptRow {
  id: string;
  cohort_id: string;
  revision: number;
  status: AttemptStatus;
  provider_reference: string | null;
  detail: Record<string, unknown> | null;
  resolution: CohortAttempt['resolution'];
  created_at: Date;
  updated_at: Date;
  started_at: Date | null;
  finished_at: Date | null;
}

const iso = (d: Date | null) => (d ? d.toISOString() : null);

export function toAttempt(r: AttemptRow): CohortAttempt {
  return {
    id: r.id,
    cohortId: r.cohort_id,
    revision: r.revision,
    status: r.status,
    providerReference: r.provider_reference,
    detail: r.detail,
    resolution: r.resolution,
    createdAt: r.created_at.toISOString(),
    updatedAt: r.updated_at.toISOString(),
    startedAt: iso(r.started_at),
    finishedAt: iso(r.finished_at),
  };
}

export function toCohort(r: CohortRow, attempts: AttemptRow[]): Cohort {
  return {
    id: r.id,
    advertiserId: r.advertiser_id,
    campaignId: r.campaign_id,
    definition: r.definition,
    estimatedSize: Number(r.estimated_size),
    revision: r.revision,
    state: r.state,
    createdBy: r.created_by,
    createdAt: r.created_at.toISOString(),
    updatedAt: r.updated_at.toISOString(),
    attempts: attempts.map(toAttempt),
  };
}

async function withAttempts(db: Knex, rows: CohortRow[]): Promise<Cohort[]> {
  if (!rows.length) return [];
  const attempts = (await db('cohort_sync_attempts')
    .whereIn(
      'cohort_id',
      rows.map((r) => r.id),
    )
    .orderBy([
      { column: 'created_at', order: 'asc' },
      { column: 'id', order: 'asc' },
    ])) as AttemptRow[];
  return rows.map((r) =>
    toCohort(
      r,
      attempts.filter((a) => a.cohort_id === r.id),
    ),
  );
}

/** A cohort with its attempts, by id alone: for workers and for re-reading what a transaction wrote. */
export async function loadCohort(db: Knex, cohortId: string): Promise<Cohort | null> {
  const row = (await db('identity_cohorts').where({ id: cohortId }).first()) as CohortRow | undefined;
  if (!row) return null;
  return (await withAttempts(db, [row]))[0]!;
}

/**
 * The caller's cohort row, or null: another tenant's, or one whose campaign is outside the
 * caller's channels, is as invisible as one that never existed.
 */
export async function findCohortRow(
  db: Knex,
  p: Principal,
  cohortId: string,
  opts: { forUpdate?: boolean } = {},
): Promise<CohortRow | null> {
  const q = db('identity_cohorts').where({ id: cohortId, advertiser_id: p.advertiserId }).first();
  if (opts.forUpdate) q.forUpdate();
  const row = (await q) as CohortRow | undefined;
  if (!row || !(await findCampaign(db, p, row.campaign_id))) return null;
  return row;
}

export async function findCohort(db: Knex, p: Principal, cohortId: string): Promise<Cohort | null> {
  const row = await findCohortRow(db, p, cohortId);
  return row ? loadCohort(db, row.id) : null;
}

/** A campaign's cohorts, newest first. The caller has already proved the campaign is theirs. */
export async function listCampaignCohorts(db: Knex, campaignId: string, limit = 100): Promise<Cohort[]> {
  const rows = (await db('identity_cohorts')
    .where({ campaign_id: campaignId })
    .orderBy([
      { column: 'created_at', order: 'desc' },
      { column: 'id', order: 'desc' },
    ])
    .limit(limit)) as CohortRow[];
  return withAttempts(db, rows);
}
