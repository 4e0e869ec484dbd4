import type { Knex } from 'knex';
import type { Logger } from '../logger';
import { closeAttempt, interrupted, type AttemptRow, type SubjectKind } from './attempts';

/** What the engine needs to know about one kind of subject to take over its attempts. */
export interface SubjectHandler {
  /** Takes the subject's locks, in the global order (the same order its outcome step uses). */
  lock(trx: Knex.Transaction, attempt: AttemptRow): Promise<void>;
  /** The call was interrupted with its outcome unknown: hand the subject to a person. */
  interrupted(trx: Knex.Transaction, attempt: AttemptRow, reason: string): Promise<void>;
  /** The queue job that carries this attempt's call. */
  job(attempt: AttemptRow): { queue: string; jobId: string };
}

export type SubjectHandlers = Record<SubjectKind, SubjectHandler>;

export const STUCK_REASON =
  'The supplier call was made but its outcome was never recorded (the worker failed after sending); the outcome is unknown.';

/**
 * Attempts opened by a person (a staff member's managed booking, or a managed change after it)
 * stay open while they work; only the worker's own calls can be stuck.
 */
const PERSON_HELD = `operation not like 'managed-%'`;

/**
 * An attempt still open long after its call must have ended (timeout plus grace), with no live
 * job that could still finish it, was stranded by a failed outcome step (the database was
 * down, the process died between the answer and the write). Its subject goes to
 * reconciliation with a reason; the supplier is never called again.
 */
export async function sweepStuckAttempts(
  db: Knex,
  handlers: SubjectHandlers,
  isJobLive: (queue: string, jobId: string) => Promise<boolean>,
  opts: { olderThan: Date; logger: Logger; pageSize?: number },
): Promise<number> {
  const pageSize = opts.pageSize ?? 200;
  let taken = 0;
  let cursor: { createdAt: Date; id: string } | null = null;
  for (;;) {
    const q = db<AttemptRow>('supplier_attempts').where('status', 'open').whereRaw(PERSON_HELD).where('created_at', '<', opts.olderThan);
    if (cursor) q.whereRaw('(created_at, id) > (?, ?)', [cursor.createdAt, cursor.id]);
    const page = (await q.orderBy([{ column: 'created_at' }, { column: 'id' }]).limit(pageSize)) as AttemptRow[];
    for (const attempt of page) {
      const handler = handlers[attempt.subject_kind];
      const { queue, jobId } = handler.job(attempt);
      if (await isJobLive(queue, jobId)) continue;
      if (await takeOverStuck(db, handler, attempt)) {
        taken++;
        opts.logger.warn(
          { attemptId: attempt.id, subject: attempt.subject_kind, subjectId: attempt.subject_id },
          'stuck supplier attempt handed to reconciliation',
        );
      }
    }
    if (page.length < pageSize) return taken;
    const last = page[page.length - 1]!;
    cursor = { createdAt: last.created_at, id: last.id };
  }
}

async function takeOverStuck(db: Knex, handler: SubjectHandler, attempt: AttemptRow): Promise<boolean> {
  return db.transaction(async (trx) => {
    await handler.lock(trx, attempt);
    if (!(await closeAttempt(trx, attempt.id, interrupted(STUCK_REASON, 'stuck')))) return false;
    await handler.interrupted(trx, attempt, STUCK_REASON);
    return true;
  });
}
