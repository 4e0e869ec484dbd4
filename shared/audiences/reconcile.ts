import type { Knex } from 'knex';
import { conflict, notFound } from '../errors';
import type { Principal } from '../auth/principal';
import type { Cohort, ResolveAttempt } from './cohort-schemas';
import { findCohortRow, loadCohort, type AttemptRow } from './cohort-store';

/**
 * Spec 28: a person with evidence that the supplier's result is unavailable discards the
 * attempt whose outcome is unknown. The attempt becomes `discarded`, the cohort `discarded`
 * with its revision +1, in one transaction. Nothing is retried or queued: a new sync of the
 * same audience is a new, separately approved request.
 */
export async function resolveCohortAttempt(
  db: Knex,
  p: Principal,
  ids: { cohortId: string; attemptId: string },
  body: ResolveAttempt,
): Promise<Cohort> {
  return db.transaction(async (trx) => {
    const cohort = await findCohortRow(trx, p, ids.cohortId, { forUpdate: true });
    if (!cohort) throw notFound();
    const attempt = (await trx('cohort_sync_attempts').where({ id: ids.attemptId, cohort_id: cohort.id }).first()) as
      AttemptRow | undefined;
    if (!attempt) throw notFound();
    if (cohort.revision !== body.expectedRevision) {
      throw conflict(
        `The cohort is at revision ${cohort.revision}, not ${body.expectedRevision}. Read it again before resolving.`,
        'revision_conflict',
      );
    }
    if (attempt.status !== 'needs-resolution') {
      throw conflict(
        `The attempt is ${attempt.status}; only an attempt that needs resolution can be discarded.`,
        'invalid_transition',
        'terminal',
      );
    }
    const resolution = {
      outcome: body.outcome,
      evidenceReference: body.evidenceReference,
      by: p.userId,
      at: new Date().toISOString(),
    };
    await trx('cohort_sync_attempts')
      .where({ id: attempt.id, status: 'needs-resolution' })
      .update({ status: 'discarded', resolution: JSON.stringify(resolution), updated_at: trx.fn.now() });
    const bumped = await trx('identity_cohorts')
      .where({ id: cohort.id, revision: body.expectedRevision })
      .update({ revision: body.expectedRevision + 1, state: 'discarded', updated_at: trx.fn.now() });
    // The row lock makes this unreachable; the guard keeps it true without relying on that.
    if (bumped !== 1) throw conflict('The cohort changed while resolving. Read it again.', 'revision_conflict');
    return (await loadCohort(trx, cohort.id))!;
  });
}
