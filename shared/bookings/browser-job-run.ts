import type { Knex } from 'knex';
import { recordEvent } from '../events/record';
import { preparationRefusal, type BrowserJobRow } from './browser-jobs';
import { browserJobLines, lineTermsDigest, toBrowserJobLine, type BrowserJobLine } from './line-terms';
import type { BrowserEvidence } from './browser-job-schemas';

/**
 * A browser job's run, as the browser worker drives it: started once (queued → running), then
 * completed with its evidence or failed with a reason. Nothing here retries: a job that failed,
 * or whose run was interrupted, stays failed, and staff ask for a new one.
 */
export type BrowserJobStart =
  | { kind: 'run'; job: BrowserJobRow; line: BrowserJobLine }
  /** Refused at start (its line changed, or is no longer prepared): ended failed. */
  | { kind: 'refused'; code: string; reason: string }
  /** It was already running: a run that died (a crash, a kill); ended failed, not run again. */
  | { kind: 'interrupted' }
  /** Already ended (or gone): nothing to do. */
  | { kind: 'ended' };

export const INTERRUPTED =
  'The worker running this job stopped before it finished (a crash, a kill or a lost lock). Browser jobs are never run twice: ask for a new one.';

/** The job's end, told to subscribers in the transaction that records it. */
function ended(
  trx: Knex,
  job: Pick<BrowserJobRow, 'id' | 'advertiser_id' | 'booking_id' | 'line_id' | 'purpose'>,
  version: number,
  end: End,
) {
  return recordEvent(trx, {
    workspaceId: job.advertiser_id,
    type: end.status === 'completed' ? 'browser_job.completed' : 'browser_job.failed',
    subjectId: job.id,
    subjectVersion: version,
    body: {
      browserJobId: job.id,
      bookingId: job.booking_id,
      lineId: job.line_id,
      purpose: job.purpose,
      status: end.status,
      failureCode: end.status === 'failed' ? end.code : null,
      evidenceDigest: end.status === 'completed' ? end.evidence.digest : null,
    },
  });
}

type End = { status: 'completed'; evidence: BrowserEvidence } | { status: 'failed'; code: string; reason: string };

/** Ends a job that is still queued or running; false when it had already ended. */
async function endJob(trx: Knex, id: string, from: readonly string[], end: End): Promise<boolean> {
  const [row] = (await trx('browser_jobs')
    .where({ id })
    .whereIn('status', from)
    .update({
      status: end.status,
      finished_at: trx.fn.now(),
      version: trx.raw('version + 1'),
      ...(end.status === 'completed'
        ? { evidence: JSON.stringify(end.evidence) }
        : { failure_code: end.code, failure_reason: end.reason.slice(0, 2000) }),
    })
    .returning(['id', 'advertiser_id', 'booking_id', 'line_id', 'purpose', 'version'])) as Array<BrowserJobRow>;
  if (!row) return false;
  await ended(trx, row, row.version, end);
  return true;
}

/**
 * Starts a job, once. A job already running was started by a run that died: it ends failed
 * (`interrupted`) rather than running twice. A job whose line's terms (its booking's approved
 * snapshot, its budget, dates or creatives) changed since it was queued is refused
 * (`snapshot_changed`), and so is a `prepare` whose line is no longer the requester's started
 * line with the same attempt in flight.
 */
export function beginBrowserJob(db: Knex, id: string, runBy: string): Promise<BrowserJobStart> {
  return db.transaction(async (trx): Promise<BrowserJobStart> => {
    const job = (await trx('browser_jobs').where({ id }).forUpdate().first()) as BrowserJobRow | undefined;
    if (!job) return { kind: 'ended' };
    if (job.status === 'running') {
      await endJob(trx, id, ['running'], { status: 'failed', code: 'interrupted', reason: INTERRUPTED });
      return { kind: 'interrupted' };
    }
    if (job.status !== 'queued') return { kind: 'ended' };
    const refuse = async (code: string, reason: string): Promise<BrowserJobStart> => {
      await endJob(trx, id, ['queued'], { status: 'failed', code, reason });
      return { kind: 'refused', code, reason };
    };
    const row = await browserJobLines(trx).where('l.id', job.line_id).first();
    if (!row) return refuse('snapshot_changed', 'The line this job was asked for is gone: it was not run.');
    const line = toBrowserJobLine(row);
    if (line.snapshotDigest !== job.snapshot_digest || lineTermsDigest(line) !== job.line_terms_digest) {
      return refuse(
        'snapshot_changed',
        "The line's approved terms changed after this job was asked for (its budget, dates or creatives): it was not run. Ask again against the line as it is now.",
      );
    }
    if (job.purpose === 'prepare') {
      const refusal = await preparationRefusal(trx, line, job.requested_by, job.provider_attempt_id);
      if (refusal) return refuse(refusal.code, `${refusal.detail} It was not run.`);
    }
    const [started] = (await trx('browser_jobs')
      .where({ id, status: 'queued' })
      .update({ status: 'running', started_at: trx.fn.now(), run_by: runBy.slice(0, 300), version: trx.raw('version + 1') })
      .returning('*')) as BrowserJobRow[];
    return { kind: 'run', job: { ...started!, channel_campaign_id: line.channelCampaignId }, line };
  });
}

export const completeBrowserJob = (db: Knex, id: string, evidence: BrowserEvidence) =>
  db.transaction((trx) => endJob(trx, id, ['running'], { status: 'completed', evidence }));

export const failBrowserJob = (db: Knex, id: string, code: string, reason: string) =>
  db.transaction((trx) => endJob(trx, id, ['queued', 'running'], { status: 'failed', code, reason }));

/**
 * Jobs still running long after any run could have ended (their worker died and their BullMQ
 * job is gone, so no second delivery will end them): ended failed as interrupted.
 */
export async function failAbandonedBrowserJobs(db: Knex, runningLongerThanMs: number): Promise<number> {
  const ids = (await db('browser_jobs')
    .where({ status: 'running' })
    .where('started_at', '<', new Date(Date.now() - runningLongerThanMs))
    .pluck('id')) as string[];
  let n = 0;
  for (const id of ids)
    if (await db.transaction((trx) => endJob(trx, id, ['running'], { status: 'failed', code: 'interrupted', reason: INTERRUPTED }))) n++;
  return n;
}

/**
 * Jobs queued longer than anyone should wait while no live worker can run them (none has the
 * browser role, or each that has it lacks Chromium): ended failed `browser_unavailable` with why,
 * instead of waiting unseen. A browser worker that comes later finds them ended and runs nothing.
 */
export async function failUnservedBrowserJobs(db: Knex, queuedLongerThanMs: number, why: string): Promise<number> {
  const ids = (await db('browser_jobs')
    .where({ status: 'queued' })
    .where('created_at', '<', new Date(Date.now() - queuedLongerThanMs))
    .pluck('id')) as string[];
  const reason = `No worker could run this job within ${Math.round(queuedLongerThanMs / 1000)} s: ${why}. Ask for a new one once a browser worker is running.`;
  let n = 0;
  for (const id of ids)
    if (await db.transaction((trx) => endJob(trx, id, ['queued'], { status: 'failed', code: 'browser_unavailable', reason }))) n++;
  return n;
}
