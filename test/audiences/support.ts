import type { TestApi, TestEnv } from '../support/api';
import { launchPlan, post, waitForBooking, type PlanLineInput } from '../support/bookings';

export interface AttemptBody {
  id: string;
  cohortId: string;
  revision: number;
  status: string;
  providerReference: string | null;
  detail: Record<string, unknown> | null;
  resolution: { outcome: string; evidenceReference: string; by: string; at: string } | null;
  startedAt: string | null;
  finishedAt: string | null;
}

export interface CohortBody {
  id: string;
  advertiserId: string;
  campaignId: string;
  definition: Record<string, unknown>;
  estimatedSize: number;
  revision: number;
  state: string;
  createdBy: string;
  attempts: AttemptBody[];
}

export interface Exposed {
  campaignId: string;
  token: string;
}

/**
 * A launched sandbox campaign whose lines are all confirmed: the exposure a cohort is built
 * from. Needs running workers. The campaign name carries the sandbox audience triggers.
 */
export async function exposedCampaign(
  env: TestEnv,
  api: TestApi,
  opts: { org?: string; name?: string; lines?: PlanLineInput[] } = {},
): Promise<Exposed> {
  const lines = opts.lines ?? [{ channel: 'ctv', adapterKey: 'sandbox-ctv', budgetMinor: 10_000 }];
  const { campaignId, booking, token } = await launchPlan(env, api, lines, opts.org ?? 'org-a', { name: opts.name ?? 'Spring launch' });
  await waitForBooking(api, token, booking.id, (b) => b.status === 'confirmed');
  return { campaignId, token };
}

export const syncBody = (overrides: Record<string, unknown> = {}) => ({
  exposedOn: ['ctv'],
  channel: 'ctv',
  purpose: 'inclusion',
  adapterKey: 'sandbox-ctv',
  executionMode: 'sandbox',
  ...overrides,
});

export const syncAudience = (api: TestApi, token: string, campaignId: string, body: unknown = syncBody()) =>
  post(api, token, `/api/v1/campaigns/${campaignId}/sync-audience`, body);

export async function readCohort(api: TestApi, token: string, cohortId: string): Promise<CohortBody> {
  const res = await api.fetch(`/api/v1/identity/cohorts/${cohortId}`, { token });
  if (res.status !== 200) throw new Error(`read cohort failed: ${res.status} ${await res.text()}`);
  return ((await res.json()) as { cohort: CohortBody }).cohort;
}

/** Polls until the predicate holds for the cohort (workers run asynchronously). */
export async function waitForCohort(
  api: TestApi,
  token: string,
  cohortId: string,
  done: (c: CohortBody) => boolean,
  timeoutMs = 20_000,
): Promise<CohortBody> {
  const deadline = Date.now() + timeoutMs;
  let last: CohortBody | undefined;
  while (Date.now() < deadline) {
    last = await readCohort(api, token, cohortId);
    if (done(last)) return last;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`cohort ${cohortId} did not settle: ${last?.state} ${JSON.stringify(last?.attempts.map((a) => a.status))}`);
}

/** A cohort synced from a fresh campaign, waited on until its attempt is definite or needs resolution. */
export async function syncedCohort(env: TestEnv, api: TestApi, opts: { org?: string; name?: string } = {}) {
  const exposed = await exposedCampaign(env, api, opts);
  const res = await syncAudience(api, exposed.token, exposed.campaignId);
  if (res.status !== 202) throw new Error(`sync failed: ${res.status} ${await res.text()}`);
  const { cohort } = (await res.json()) as { cohort: CohortBody };
  const settled = await waitForCohort(api, exposed.token, cohort.id, (c) => c.state !== 'syncing');
  return { ...exposed, cohort: settled };
}

const count = async (q: PromiseLike<Array<Record<string, unknown>>>) => Number((await q)[0]!.n);

/** What an audience request may have changed: cohorts, attempts, queued work and supplier receipts. */
export async function footprint(env: TestEnv) {
  return {
    cohorts: await count(env.db('identity_cohorts').count({ n: '*' })),
    attempts: await count(env.db('cohort_sync_attempts').count({ n: '*' })),
    outbox: await count(env.db('outbox').where('queue', 'audience-sync').count({ n: '*' })),
    ledger: await count(env.db('sandbox_ledger').where({ operation: 'audience-sync' }).count({ n: '*' })),
  };
}

export const ledgerOf = (env: TestEnv, attemptId: string) => env.db('sandbox_ledger').where({ idempotency_key: attemptId });
