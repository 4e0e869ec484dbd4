import { z } from 'zod';
import { ArtifactStore, artifactDirOf } from '../../shared/studies/artifact-store';
import { ARTIFACT_BODY_LIMIT_BYTES, ArtifactUploadSchema, requireHumanUploader, uploadArtifact } from '../../shared/studies/artifacts';
import { ArtifactUploadedEnvelope } from '../../shared/studies/study-views';
import type { ApiDeps } from '../deps';
import { defineRoute } from '../http/route';

/** Spec 10: brand lift study artifacts, uploaded by people. */
export function studyArtifactRoutes({ db, config }: ApiDeps) {
  const store = new ArtifactStore(artifactDirOf(config));
  return [
    defineRoute({
      method: 'post',
      path: '/api/v1/brand-lift-studies/:studyId/artifacts',
      operationId: 'uploadStudyArtifact',
      summary:
        'Upload a study artifact (human only; Idempotency-Key required; body at most 2800300 bytes). Stored content-addressed with its SHA-256 until retainUntil.',
      tags: ['studies'],
      access: 'bearer',
      scope: { resource: 'study', param: 'studyId' },
      params: z.strictObject({ studyId: z.uuid() }),
      body: ArtifactUploadSchema,
      bodyLimitBytes: ARTIFACT_BODY_LIMIT_BYTES,
      authorize: async (principal) => requireHumanUploader(principal),
      idempotency: 'required',
      responses: {
        201: { description: 'Stored; the study requirements it now meets and still misses.', schema: ArtifactUploadedEnvelope },
        400: { description: 'Invalid field, base64, content or retention.' },
        403: { description: 'Delegated agents cannot upload.' },
        404: { description: 'No such study.' },
        409: { description: 'Idempotency conflict.' },
        413: { description: 'Body over 2800300 bytes.' },
      },
      async handler({ principal, params, body }) {
        const result = await uploadArtifact(db, store, principal, params.studyId, body, {
          maxRetentionDays: config.ARTIFACT_RETENTION_MAX_DAYS,
          requiredArtifacts: config.STUDY_REQUIRED_ARTIFACTS,
        });
        return { status: 201, body: result };
      },
    }),
  ];
}
