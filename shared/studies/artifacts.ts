import { randomUUID } from 'node:crypto';
import { assertHuman } from '../auth/guards';
import type { Knex } from 'knex';
import { z } from 'zod';
import { badRequest } from '../errors';
import { type Principal } from '../auth/principal';
import { ArtifactPurposeSchema } from '../config/measurement-settings';
import { ArtifactMediaTypeSchema, checkContent, decodeBase64 } from './artifact-content';
import { ArtifactStore, lockDigest } from './artifact-store';
import { artifactView, studyArtifacts, type ArtifactRow } from './artifact-summary';
import { studyView } from './study-store';

/** Spec 10: the raw body limit, counted in bytes as received. */
export const ARTIFACT_BODY_LIMIT_BYTES = 2_800_300;
export const ARTIFACT_BASE64_MAX = 2_796_204;

export const ArtifactUploadSchema = z
  .strictObject({
    purpose: ArtifactPurposeSchema,
    mediaType: ArtifactMediaTypeSchema,
    contentBase64: z.string().min(1).max(ARTIFACT_BASE64_MAX),
    retainUntil: z.iso.datetime({ offset: true }),
  })
  .meta({ id: 'StudyArtifactUpload' });
export type ArtifactUpload = z.infer<typeof ArtifactUploadSchema>;

const DAY_MS = 86_400_000;

/** Only a person uploads study artifacts; a delegated agent is refused before its body is read. */
export function requireHumanUploader(p: Principal): void {
  assertHuman(p, 'upload study artifacts');
}

/**
 * Stores an artifact of a study: the bytes content-addressed by SHA-256, the record with its
 * purpose and retention. Refuses (400) bytes that are not what they claim and a retainUntil
 * that is past or beyond the configured maximum.
 */
export async function uploadArtifact(
  db: Knex,
  store: ArtifactStore,
  p: Principal,
  studyId: string,
  body: ArtifactUpload,
  settings: { maxRetentionDays: number; requiredArtifacts: readonly string[] },
) {
  requireHumanUploader(p);
  await studyView(db, p, studyId); // 404 for another tenant's study or one that never existed
  const retainUntil = new Date(body.retainUntil);
  const now = Date.now();
  if (retainUntil.getTime() <= now) {
    throw badRequest('retainUntil must be in the future.', [{ path: 'body.retainUntil', message: 'in the past' }], 'retention_invalid');
  }
  if (retainUntil.getTime() > now + settings.maxRetentionDays * DAY_MS) {
    throw badRequest(
      `retainUntil may be at most ${settings.maxRetentionDays} days ahead.`,
      [{ path: 'body.retainUntil', message: 'beyond the maximum retention' }],
      'retention_invalid',
    );
  }
  const bytes = decodeBase64(body.contentBase64);
  checkContent(bytes, body.mediaType);
  return db.transaction(async (trx) => {
    const sha256 = ArtifactStore.digest(bytes);
    // Under the digest's lock, the retention sweep cannot delete these bytes between the write and the record.
    await lockDigest(trx, sha256);
    await store.put(bytes);
    const [row] = await trx('study_artifacts')
      .insert({
        id: randomUUID(),
        advertiser_id: p.advertiserId,
        study_id: studyId,
        purpose: body.purpose,
        media_type: body.mediaType,
        sha256,
        size_bytes: bytes.length,
        retain_until: retainUntil,
        uploaded_by: p.userId,
      })
      .returning('*');
    const { requiredArtifacts } = await studyArtifacts(trx, studyId, settings.requiredArtifacts);
    return { artifact: artifactView(row as ArtifactRow), requiredArtifacts };
  });
}
