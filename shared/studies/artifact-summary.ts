import type { Knex } from 'knex';
import { ARTIFACT_PURPOSES } from '../config/measurement-settings';

export type ArtifactPurpose = (typeof ARTIFACT_PURPOSES)[number];

/** Used when no configured list is passed (the config default). */
export const DEFAULT_REQUIRED_ARTIFACTS: readonly ArtifactPurpose[] = [
  'supplier-quote',
  'contract',
  'privacy-notice',
  'consent',
  'processing-terms',
];

export interface ArtifactRow {
  id: string;
  study_id: string;
  purpose: string;
  media_type: string;
  sha256: string;
  size_bytes: number;
  retain_until: Date;
  bytes_deleted_at: Date | null;
  uploaded_by: string;
  created_at: Date;
}

export const artifactView = (a: ArtifactRow) => ({
  id: a.id,
  studyId: a.study_id,
  purpose: a.purpose,
  mediaType: a.media_type,
  sha256: a.sha256,
  sizeBytes: a.size_bytes,
  retainUntil: a.retain_until.toISOString(),
  bytesRetained: a.bytes_deleted_at === null,
  bytesDeletedAt: a.bytes_deleted_at?.toISOString() ?? null,
  uploadedBy: a.uploaded_by,
  createdAt: a.created_at.toISOString(),
});

/** A study's artifacts and which of the required purposes it has and still needs. */
export async function studyArtifacts(db: Knex, studyId: string, required: readonly string[] = DEFAULT_REQUIRED_ARTIFACTS) {
  const rows = (await db('study_artifacts')
    .where({ study_id: studyId })
    .orderBy([{ column: 'created_at' }, { column: 'id' }])) as ArtifactRow[];
  const present = new Set(rows.map((r) => r.purpose));
  return {
    artifacts: rows.map(artifactView),
    requiredArtifacts: {
      required: [...required],
      present: required.filter((p) => present.has(p)),
      missing: required.filter((p) => !present.has(p)),
    },
  };
}
