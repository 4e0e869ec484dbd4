import type { Knex } from 'knex';
import type { Logger } from '../logger';
import { audienceSyncJobId } from '../queues/jobs';
import { AUDIENCE_SYNC_QUEUE } from '../queues/names';
import {
  closeAttempt,
  findOpenAttempt,
  interrupted,
  isUnknown,
  openAttempt,
  runSupplierCall,
  type Begun,
  type SupplierCallFlow,
} from '../suppliers/attempts';
import type { SubjectHandler } from '../suppliers/stuck-attempts';
import type {
  AudienceSupplier,
  AudienceSupplierContext,
  AudienceSupplierFor,
  AudienceSyncOutcome,
  AudienceSyncRequest,
} from './audience-supplier';
import type { AttemptStatus } from './cohort-schemas';
import type { AttemptRow, CohortRow } from './cohort-store';

export type SyncResult = 'skipped' | 'synced' | 'rejected' | 'needs-resolution' | 'outcome-recorded-for-resolution';

export interface SyncStart {
  /** The ledger attempt; null when the supplier is refused before anything is sent. */
  attemptId: string | null;
  supplier: AudienceSupplier;
  request: AudienceSyncRequest;
  from: AttemptStatus;
}

const REDELIVERED = 'The sync was interrupted after it was sent; the supplier may or may not have created the audience.';

const lockCohort = (trx: Knex, cohortId: string) => trx('identity_cohorts').where({ id: cohortId }).forUpdate().first();

/** Moves the attempt and its cohort together; the attempt's previous status guards the update. */
async function settle(
  trx: Knex,
  attempt: { id: string; cohortId: string; from: AttemptStatus },
  to: 'synced' | 'rejected' | 'needs-resolution',
  patch: { providerReference?: string | null; detail: Record<string, unknown> | null },
): Promise<boolean> {
  const updated = await trx('cohort_sync_attempts')
    .where({ id: attempt.id, status: attempt.from })
    .update({
      status: to,
      provider_reference: patch.providerReference ?? null,
      detail: patch.detail === null ? null : JSON.stringify(patch.detail),
      finished_at: trx.fn.now(),
      updated_at: trx.fn.now(),
    });
  if (updated === 0) return false;
  await trx('identity_cohorts').where({ id: attempt.cohortId }).update({ state: to, updated_at: trx.fn.now() });
  return true;
}

function syncFlow(suppliers: AudienceSupplierFor, job: { cohortId: string; attemptId: string }, ctx: AudienceSupplierContext) {
  const flow: SupplierCallFlow<SyncStart, AudienceSyncOutcome, SyncResult> = {
    /**
     * Commits the attempt in flight before the supplier hears of it, or finds that an earlier
     * delivery of this job already did: then the supplier may have acted, and it is never called again.
     */
    async begin(trx) {
      const cohort = (await lockCohort(trx, job.cohortId)) as CohortRow | undefined;
      if (!cohort) return { kind: 'done', result: 'skipped' };
      const attempt = (await trx('cohort_sync_attempts').where({ id: job.attemptId, cohort_id: cohort.id }).first()) as
        AttemptRow | undefined;
      if (!attempt) return { kind: 'done', result: 'skipped' };
      const ref = { id: attempt.id, cohortId: cohort.id };
      if (attempt.status === 'in-flight') {
        const open = await findOpenAttempt(trx, 'sync', attempt.id);
        if (open) await closeAttempt(trx, open.id, interrupted(REDELIVERED, 'redelivered'));
        await settle(trx, { ...ref, from: 'in-flight' }, 'needs-resolution', { detail: { reason: REDELIVERED, cause: 'redelivered' } });
        return { kind: 'done', result: 'needs-resolution' };
      }
      // Anything else but a queued attempt has been settled already: a duplicate delivery.
      if (attempt.status !== 'queued') return { kind: 'done', result: 'skipped' };

      const campaign = await trx('campaigns').where({ id: cohort.campaign_id }).first('name');
      const def = cohort.definition;
      const supplier = suppliers(def);
      const request: AudienceSyncRequest = {
        attemptId: attempt.id,
        cohortId: cohort.id,
        campaignId: cohort.campaign_id,
        campaignName: String(campaign?.name ?? ''),
        adapterKey: def.adapterKey,
        channel: def.channel,
        purpose: def.purpose,
        executionMode: def.executionMode,
        estimatedSize: Number(cohort.estimated_size),
      };
      if (!supplier.callsSupplier) return { kind: 'call', start: { attemptId: null, supplier, request, from: 'queued' } };
      // The cohort attempt's own id is the supplier's idempotency key and the ledger attempt's id.
      await openAttempt(trx, {
        id: attempt.id,
        subjectKind: 'sync',
        subjectId: attempt.id,
        adapterKey: def.adapterKey,
        operation: 'audience-sync',
      });
      await trx('cohort_sync_attempts')
        .where({ id: attempt.id, status: 'queued' })
        .update({ status: 'in-flight', started_at: trx.fn.now(), updated_at: trx.fn.now() });
      return { kind: 'call', start: { attemptId: attempt.id, supplier, request, from: 'in-flight' } };
    },

    call: (start) => start.supplier.sync(start.request, ctx),

    async lock(trx, start) {
      await lockCohort(trx, start.request.cohortId);
    },

    closeWith(outcome) {
      if (isUnknown(outcome)) return { status: 'unknown', detail: { cause: outcome.cause } };
      return { status: outcome.kind, providerReference: outcome.kind === 'synced' ? outcome.providerReference : null, detail: outcome };
    },

    async apply(trx, start, outcome) {
      const ref = { id: start.request.attemptId, cohortId: start.request.cohortId, from: start.from };
      let done: boolean;
      switch (outcome.kind) {
        case 'synced':
          done = await settle(trx, ref, 'synced', { providerReference: outcome.providerReference, detail: null });
          break;
        case 'rejected':
          done = await settle(trx, ref, 'rejected', { detail: { reasons: outcome.reasons } });
          break;
        case 'unknown':
          done = await settle(trx, ref, 'needs-resolution', { detail: { reason: outcome.cause, cause: 'unknown-outcome' } });
          break;
      }
      if (done) return outcome.kind === 'unknown' ? 'needs-resolution' : outcome.kind;
      return flow.late(trx, start, outcome);
    },

    async late(trx, start, outcome) {
      // Shown with the cohort's attempt, for whoever resolves it; nothing else changes.
      await trx('cohort_sync_attempts')
        .where({ id: start.request.attemptId })
        .update({
          detail: trx.raw("coalesce(detail, '{}'::jsonb) || jsonb_build_object('lateOutcome', ?::jsonb)", [JSON.stringify(outcome)]),
          updated_at: trx.fn.now(),
        });
      return 'outcome-recorded-for-resolution';
    },
  };
  return flow;
}

/** The first step alone: what a first delivery commits before the supplier hears of the sync. */
export function beginAudienceSync(
  db: Knex,
  suppliers: AudienceSupplierFor,
  job: { cohortId: string; attemptId: string },
  ctx: AudienceSupplierContext,
): Promise<Begun<SyncStart, SyncResult>> {
  return db.transaction((trx) => syncFlow(suppliers, job, ctx).begin(trx));
}

export interface SyncExecutionOptions {
  timeoutMs: number;
  context: AudienceSupplierContext;
  logger: Logger;
}

/**
 * Runs one cohort sync attempt through the supplier-call engine: committed in flight before
 * the call, the attempt id as the supplier's idempotency key, the outcome recorded after. A
 * timeout, a lost answer or a crash leaves the attempt needing resolution; nothing is ever
 * sent twice.
 */
export function executeAudienceSync(
  db: Knex,
  suppliers: AudienceSupplierFor,
  job: { cohortId: string; attemptId: string },
  opts: SyncExecutionOptions,
): Promise<SyncResult> {
  return runSupplierCall(db, syncFlow(suppliers, job, opts.context), {
    timeoutMs: opts.timeoutMs,
    logger: opts.logger,
    context: { attemptId: job.attemptId },
  });
}

/** How the stuck-attempt sweep takes over a sync attempt. */
export const syncAttempts: SubjectHandler = {
  async lock(trx, a) {
    const row = await trx('cohort_sync_attempts').where({ id: a.subject_id }).first('cohort_id');
    if (row) await lockCohort(trx, row.cohort_id);
  },
  async interrupted(trx, a, reason) {
    const row = await trx('cohort_sync_attempts').where({ id: a.subject_id }).first('cohort_id');
    if (row)
      await settle(trx, { id: a.subject_id, cohortId: row.cohort_id, from: 'in-flight' }, 'needs-resolution', {
        detail: { reason, cause: 'stuck' },
      });
  },
  job: (a) => ({ queue: AUDIENCE_SYNC_QUEUE, jobId: audienceSyncJobId(a.subject_id) }),
};
