import type { Knex } from 'knex';
import { unprocessable } from '../errors';
import type { CreativeRef } from './creative-schemas';
import { findAdapter } from '../adapters/catalogue';

/** An approval counts only for the same creative version, bytes, delivery metadata and supplier. */
export async function hasValidApproval(trx: Knex, ref: CreativeRef, adapterKey: string): Promise<boolean> {
  const row = await trx('creative_approvals')
    .where({
      creative_id: ref.id,
      version: ref.version,
      asset_fingerprint: ref.assetFingerprint,
      metadata_digest: ref.metadataDigest,
      adapter_key: adapterKey,
      status: 'valid',
    })
    .first('id');
  return Boolean(row);
}

/** Live buying needs reviewed creative evidence: every live line carries creatives its supplier approved. */
export async function checkCreativeEvidence(
  trx: Knex,
  lines: ReadonlyArray<{ adapterKey: string; creatives: CreativeRef[] }>,
): Promise<void> {
  for (const [i, line] of lines.entries()) {
    if (!line.creatives.length) {
      throw unprocessable(`Line ${i + 1} has no creative; live buying needs reviewed creative evidence.`, 'creative_evidence_required');
    }
    // Staff book workflow suppliers by hand and record the supplier's acceptance as evidence when they confirm.
    if (findAdapter(line.adapterKey)?.kind === 'workflow') continue;
    for (const ref of line.creatives) {
      if (!(await hasValidApproval(trx, ref, line.adapterKey))) {
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
  for (const ref of line.creatives) if (!(await hasValidApproval(trx, ref, line.adapter_key))) return false;
  return true;
}
