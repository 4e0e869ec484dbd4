import { randomUUID } from 'node:crypto';
import type { Knex } from 'knex';
import { isUuid } from '../ids';
import { conflict, notFound, unprocessable } from '../errors';
import { enqueueInTransaction } from '../outbox/outbox';
import { browserJobMessage, type JobMessage } from '../queues/jobs';
import { requireAssigned, type StaffContext } from '../staff/staff-access';
import { supplierUrlRefusal } from './browser-job-policy';
import { browserJobLines, lineTermsDigest, toBrowserJobLine, type BrowserJobLine } from './line-terms';
import type { BrowserEvidence, BrowserJob, BrowserJobRequest, BrowserJobStatus } from './browser-job-schemas';

export interface BrowserJobRow {
  id: string;
  advertiser_id: string;
  campaign_id: string;
  booking_id: string;
  line_id: string;
  purpose: 'observe' | 'prepare';
  supplier_url: string;
  requested_by: string;
  status: BrowserJobStatus;
  snapshot_digest: string;
  line_terms_digest: string | null;
  provider_attempt_id: string | null;
  version: number;
  run_by: string | null;
  created_at: Date;
  started_at: Date | null;
  finished_at: Date | null;
  failure_code: string | null;
  failure_reason: string | null;
  evidence: BrowserEvidence | null;
  /** Joined from the line. */
  channel_campaign_id: string;
}

export const browserJobHref = (id: string) => `/api/v1/internal/fulfilment/browser-jobs/${id}`;

/** Jobs with their line's channel campaign id, which the request named them by. */
export const browserJobRows = (db: Knex) =>
  db('browser_jobs as j').join('booking_lines as l', 'l.id', 'j.line_id').select('j.*', 'l.channel_campaign_id');

const iso = (d: Date | null) => (d ? d.toISOString() : null);

export function toBrowserJob(r: BrowserJobRow): BrowserJob {
  return {
    id: r.id,
    advertiserId: r.advertiser_id,
    campaignId: r.campaign_id,
    bookingId: r.booking_id,
    lineId: r.line_id,
    channelCampaignId: r.channel_campaign_id,
    purpose: r.purpose,
    supplierUrl: r.supplier_url,
    status: r.status,
    snapshotDigest: r.snapshot_digest,
    lineTermsDigest: r.line_terms_digest,
    requestedBy: r.requested_by,
    createdAt: r.created_at.toISOString(),
    startedAt: iso(r.started_at),
    finishedAt: iso(r.finished_at),
    failure: r.failure_code ? { code: r.failure_code, reason: r.failure_reason ?? '' } : null,
    evidence: r.evidence,
    href: browserJobHref(r.id),
  };
}

/**
 * Preparing needs the caller's own started computer-use line with its managed attempt in flight,
 * and a supplier that permits it (no live supplier has granted automation permission). The same
 * checks run again when the job starts.
 */
export async function preparationRefusal(db: Knex, line: BrowserJobLine, requestedBy: string, attemptId?: string | null) {
  if (line.executionMethod !== 'computer-use')
    return unprocessable('Only computer-use lines can be prepared in a browser.', 'not_computer_use');
  if (line.claimedBy !== requestedBy) return conflict('Only the operator who claimed this line can prepare it.', 'claim_required');
  const attempt = await db('supplier_attempts').where({ line_id: line.id, status: 'open', operation: 'managed-booking' }).first('id');
  const current = line.status === 'in-progress' && attempt && attempt.id === line.providerAttemptId;
  if (!current || (attemptId !== undefined && attemptId !== line.providerAttemptId)) {
    return conflict('Preparing needs the started booking and its current in-flight attempt.', 'attempt_not_in_flight');
  }
  if (line.executionMode === 'live') {
    // No commercial terms, automation permission or supplier authority are on record for live suppliers.
    return unprocessable('Live suppliers have not granted automation permission for browser preparation.', 'automation_not_permitted');
  }
  return null;
}

/**
 * A staff member asks for a supervised, read-only browser job on a supplier site: recorded and
 * queued (through the outbox) in one transaction. Observing is limited to the supplier's official
 * public sources; preparing needs the member's own started computer-use line with its attempt in
 * flight. Nothing is ever submitted or bought; the job brings back evidence.
 */
export async function requestBrowserJob(
  db: Knex,
  staff: StaffContext,
  advertiserId: string,
  campaignId: string,
  body: BrowserJobRequest,
  opts: { allowLoopback: boolean },
): Promise<{ browserJob: BrowserJob; queued: JobMessage[] }> {
  requireAssigned(staff, advertiserId);
  if (!isUuid(campaignId)) throw notFound();
  const row = await browserJobLines(db)
    .where({ 'b.advertiser_id': advertiserId, 'b.campaign_id': campaignId, 'l.channel_campaign_id': body.channelCampaignId })
    .first();
  if (!row) throw notFound();
  const line = toBrowserJobLine(row);
  if (line.snapshotDigest !== body.expectedSnapshotDigest) {
    throw conflict("expectedSnapshotDigest does not match the booking's approved snapshot.", 'snapshot_mismatch');
  }
  const refused = supplierUrlRefusal(line.adapterKey, body.supplierUrl, opts.allowLoopback);
  const refuseUrl = () => {
    if (!refused) return;
    const where =
      body.purpose === 'observe'
        ? "Observation is limited to the supplier's official public sources"
        : "Preparation is limited to the supplier's own site";
    throw unprocessable(`${where}: ${refused.why}.`, refused.code);
  };
  if (body.purpose === 'observe') refuseUrl();
  else {
    const refusal = await preparationRefusal(db, line, staff.userId);
    if (refusal) throw refusal;
    refuseUrl();
  }
  const id = randomUUID();
  const queued = [browserJobMessage({ browserJobId: id })];
  await db.transaction(async (trx) => {
    await trx('browser_jobs').insert({
      id,
      advertiser_id: advertiserId,
      campaign_id: campaignId,
      booking_id: line.bookingId,
      line_id: line.id,
      purpose: body.purpose,
      supplier_url: body.supplierUrl,
      requested_by: staff.userId,
      status: 'queued',
      snapshot_digest: line.snapshotDigest,
      line_terms_digest: lineTermsDigest(line),
      provider_attempt_id: body.purpose === 'prepare' ? line.providerAttemptId : null,
    });
    await enqueueInTransaction(trx, queued);
  });
  const stored = (await browserJobRows(db).where('j.id', id).first()) as BrowserJobRow;
  return { browserJob: toBrowserJob(stored), queued };
}

/** A job, for staff assigned to its client; anyone else gets the same 404 as for an id that never existed. */
export async function findBrowserJob(db: Knex, staff: StaffContext, id: string): Promise<BrowserJob> {
  if (!isUuid(id)) throw notFound();
  const row = (await browserJobRows(db).where('j.id', id).first()) as BrowserJobRow | undefined;
  if (!row) throw notFound();
  requireAssigned(staff, row.advertiser_id);
  return toBrowserJob(row);
}

/** A booking's jobs, newest first (at most `limit`). The caller has checked the booking is the staff member's to see. */
export async function listBookingBrowserJobs(db: Knex, bookingId: string, limit = 50): Promise<BrowserJob[]> {
  const rows = (await browserJobRows(db).where('j.booking_id', bookingId).orderBy('j.created_at', 'desc').limit(limit)) as BrowserJobRow[];
  return rows.map(toBrowserJob);
}
