import type { Knex } from 'knex';
import { z } from 'zod';
import { conflict } from '../errors';
import type { BrowserEvidence } from './browser-job-schemas';

/** Browser jobs whose evidence a staff member cites when settling a line (confirm, reject, resolve). */
export const CitedBrowserJobs = z.array(z.uuid()).min(1).max(5);

/** What a line's event keeps of each cited job: enough to find the evidence and prove it unchanged. */
export interface CitedEvidence {
  browserJobId: string;
  evidenceDigest: string;
  snapshotDigest: string;
  finalUrl: string;
  observedAt: string;
  screenshotSha256: string;
  textSha256: string;
}

/**
 * The cited jobs' evidence, read in the transaction that settles the line: each must be a
 * completed job of this very line (409 `evidence_not_citable` otherwise, and nothing changes).
 */
export async function citedEvidence(trx: Knex, lineId: string, ids: readonly string[] | undefined): Promise<CitedEvidence[] | undefined> {
  if (!ids?.length) return undefined;
  const unique = [...new Set(ids)];
  const rows = (await trx('browser_jobs')
    .whereIn('id', unique)
    .where({ line_id: lineId, status: 'completed' })
    .select('id', 'evidence')) as Array<{ id: string; evidence: BrowserEvidence }>;
  const found = new Map(rows.map((r) => [r.id, r.evidence]));
  const missing = unique.filter((id) => !found.has(id));
  if (missing.length) {
    throw conflict(
      `Only the evidence of a completed browser job of this line can be cited; ${missing.join(', ')} is not one.`,
      'evidence_not_citable',
    );
  }
  return unique.map((id) => {
    const e = found.get(id)!;
    return {
      browserJobId: id,
      evidenceDigest: e.digest,
      snapshotDigest: e.snapshotDigest,
      finalUrl: e.finalUrl,
      observedAt: e.observedAt,
      screenshotSha256: e.screenshot.sha256,
      textSha256: e.text.sha256,
    };
  });
}
