import type { Knex } from 'knex';
import { unprocessable } from '../errors';
import type { CreativeRef } from './creative-schemas';
import { findAdapter } from '../adapters/catalogue';

/** An approval counts only for the same creative version, bytes, delivery metadata and supplier. */
const approvalKey = (a: { creativeId: string; version: number; assetFingerprint: string; metadataDigest: string; adapterKey: string }) =>
  JSON.stringify([a.creativeId.toLowerCase(), a.version, a.assetFingerprint, a.metadataDigest, a.adapterKey]);

/** The valid approvals of these creatives, read in one query, as keys `covers` can look up. */
async function validApprovals(trx: Knex, creativeIds: readonly string[]): Promise<Set<string>> {
  if (!creativeIds.length) return new Set();
  const rows = (await trx('creative_approvals')
    .whereIn('creative_id', [...new Set(creativeIds)])
    .andWhere({ status: 'valid' })
    .select('creative_id', 'version', 'asset_fingerprint', 'metadata_digest', 'adapter_key')) as Array<Record<string, string | number>>;
  return new Set(
    rows.map((r) =>
      approvalKey({
        creativeId: r.creative_id as string,
        version: r.version as number,
        assetFingerprint: r.asset_fingerprint as string,
        metadataDigest: r.metadata_digest as string,
        adapterKey: r.adapter_key as string,
      }),
    ),
  );
}

const covers = (approvals: Set<string>, ref: CreativeRef, adapterKey: string) =>
  approvals.has(approvalKey({ ...ref, creativeId: ref.id, adapterKey }));

/** Live buying needs reviewed creative evidence: every live line carries creatives its supplier approved. */
export async function checkCreativeEvidence(
  trx: Knex,
  lines: ReadonlyArray<{ adapterKey: string; creatives: CreativeRef[] }>,
): Promise<void> {
  const approvals = await validApprovals(
    trx,
    lines.flatMap((l) => l.creatives.map((c) => c.id)),
  );
  for (const [i, line] of lines.entries()) {
    if (!line.creatives.length) {
      throw unprocessable(`Line ${i + 1} has no creative; live buying needs reviewed creative evidence.`, 'creative_evidence_required');
    }
    // Staff book workflow suppliers by hand and record the supplier's acceptance as evidence when they confirm.
    if (findAdapter(line.adapterKey)?.kind === 'workflow') continue;
    for (const ref of line.creatives) {
      if (!covers(approvals, ref, line.adapterKey)) {
        throw unprocessable(
          `Creative "${ref.name}" (version ${ref.version}) has no approval from ${line.adapterKey} for these exact bytes and delivery metadata. Submit it for review.`,
          'creative_not_approved',
        );
      }
    }
  }
}

/** A native staged line may be enabled once every one of its creatives is approved by its supplier. */
export async function lineEnableable(trx: Knex, line: { adapter_key: string; creatives: CreativeRef[] }): Promise<boolean> {
  if (!line.creatives.length) return false;
  const approvals = await validApprovals(
    trx,
    line.creatives.map((c) => c.id),
  );
  return line.creatives.every((ref) => covers(approvals, ref, line.adapter_key));
}
