import { withTimeout } from '../timeout';
import type { Knex } from 'knex';
import { UnknownOutcome } from '../adapters/adapter';
import type { Logger } from '../logger';
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

export type SyncStart =
  { kind: 'done'; result: SyncResult } | { kind: 'call'; supplier: AudienceSupplier; request: AudienceSyncRequest; from: AttemptStatus };

const REDELIVERED = 'The sync was interrupted after it was sent; the supplier may or may not have created the audience.';

/** Moves the attempt and its cohort together; the attempt's previous status guards the update. */
async function settle(
  trx: Knex,
  attempt: { id: string; cohortId: string; from: AttemptStatus },
  to: 'synced' | 'rejected' | 'needs-resolution',
  patch: { supplierReference?: string | null; detail: Record<string, unknown> | null },
): Promise<boolean> {
  const updated = await trx('cohort_sync_attempts')
    .where({ id: attempt.id, status: attempt.from })
    .update({
      status: to,
      supplier_reference: patch.supplierReference ?? null,
      detail: patch.detail === null ? null : JSON.stringify(patch.detail),
      finished_at: trx.fn.now(),
      updated_at: trx.fn.now(),
    });
  if (updated === 0) return false;
  await trx('identity_cohorts').where({ id: attempt.cohortId }).update({ state: to, updated_at: trx.fn.now() });
  return true;
}

/**
 * Commits the attempt in flight before the supplier hears of it, or finds that an earlier
 * delivery of this job already did: then the supplier may have acted, and it is never called again.
 */
export async function beginAudienceSync(
  db: Knex,
  suppliers: AudienceSupplierFor,
  job: { cohortId: string; attemptId: string },
): Promise<SyncStart> {
  return db.transaction(async (trx): Promise<SyncStart> => {
    const cohort = (await trx('identity_cohorts').where({ id: job.cohortId }).forUpdate().first()) as CohortRow | undefined;
    if (!cohort) return { kind: 'done', result: 'skipped' };
    const attempt = (await trx('cohort_sync_attempts').where({ id: job.attemptId, cohort_id: cohort.id }).first()) as
      AttemptRow | undefined;
    if (!attempt) return { kind: 'done', result: 'skipped' };
    const ref = { id: attempt.id, cohortId: cohort.id };
    if (attempt.status === 'in-flight') {
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
    if (!supplier.callsSupplier) return { kind: 'call', supplier, request, from: 'queued' };
    await trx('cohort_sync_attempts')
      .where({ id: attempt.id, status: 'queued' })
      .update({ status: 'in-flight', started_at: trx.fn.now(), updated_at: trx.fn.now() });
    return { kind: 'call', supplier, request, from: 'in-flight' };
  });
}

/** Records what the supplier said, if the attempt is still waiting for it. */
async function finish(
  db: Knex,
  start: Extract<SyncStart, { kind: 'call' }>,
  outcome: AudienceSyncOutcome | { kind: 'unknown'; cause: string },
): Promise<SyncResult> {
  return db.transaction(async (trx): Promise<SyncResult> => {
    const { request, from } = start;
    await trx('identity_cohorts').where({ id: request.cohortId }).forUpdate().first('id');
    const ref = { id: request.attemptId, cohortId: request.cohortId, from };
    let done: boolean;
    switch (outcome.kind) {
      case 'synced':
        done = await settle(trx, ref, 'synced', { supplierReference: outcome.supplierReference, detail: null });
        break;
      case 'rejected':
        done = await settle(trx, ref, 'rejected', { detail: { reasons: outcome.reasons } });
        break;
      case 'unknown':
        done = await settle(trx, ref, 'needs-resolution', { detail: { reason: outcome.cause, cause: 'unknown-outcome' } });
        break;
    }
    if (done) return outcome.kind === 'unknown' ? 'needs-resolution' : outcome.kind;
    // A re-delivery already sent the attempt to resolution (or a person settled it): keep the
    // late answer on the attempt as evidence for whoever resolves it, and change nothing else.
    await trx('cohort_sync_attempts')
      .where({ id: request.attemptId })
      .update({
        detail: trx.raw("coalesce(detail, '{}'::jsonb) || jsonb_build_object('lateOutcome', ?::jsonb)", [JSON.stringify(outcome)]),
        updated_at: trx.fn.now(),
      });
    return 'outcome-recorded-for-resolution';
  });
}

export interface SyncExecutionOptions {
  timeoutMs: number;
  context: AudienceSupplierContext;
  logger: Logger;
}

/**
 * Runs one cohort sync attempt: committed in flight before the call, the attempt id as the
 * supplier's idempotency key, the outcome recorded after. A timeout, a lost answer or a
 * crash leaves the attempt needing resolution; nothing is ever sent twice.
 */
export async function executeAudienceSync(
  db: Knex,
  suppliers: AudienceSupplierFor,
  job: { cohortId: string; attemptId: string },
  opts: SyncExecutionOptions,
): Promise<SyncResult> {
  const start = await beginAudienceSync(db, suppliers, job);
  if (start.kind === 'done') return start.result;
  let outcome: AudienceSyncOutcome;
  try {
    outcome = await withTimeout(
      start.supplier.sync(start.request, opts.context),
      opts.timeoutMs,
      () => new UnknownOutcome(`no answer within ${opts.timeoutMs} ms`),
    );
  } catch (err) {
    const cause = err instanceof UnknownOutcome ? err.message : 'The supplier call failed after it was sent.';
    if (!(err instanceof UnknownOutcome)) opts.logger.error({ err, attemptId: job.attemptId }, 'audience sync failed; outcome unknown');
    return finish(db, start, { kind: 'unknown', cause });
  }
  return finish(db, start, outcome);
}
