import { z } from 'zod';
import { DateTimeSchema, Sha256HexSchema, UuidSchema } from '../wire';
import { ArtifactPurposeSchema } from '../config/measurement-settings';
import { ArtifactMediaTypeSchema } from './artifact-content';

/** Response shapes of brand lift studies. */
export const StudyArtifactSchema = z
  .object({
    id: UuidSchema,
    studyId: UuidSchema,
    purpose: ArtifactPurposeSchema,
    mediaType: ArtifactMediaTypeSchema,
    sha256: Sha256HexSchema,
    sizeBytes: z.number().int().min(0),
    retainUntil: DateTimeSchema,
    bytesRetained: z.boolean(),
    bytesDeletedAt: DateTimeSchema.nullable(),
    uploadedBy: z.string().min(1),
    createdAt: DateTimeSchema,
  })
  .meta({ id: 'StudyArtifact' });

export const RequiredArtifactsSchema = z
  .object({ required: z.array(ArtifactPurposeSchema), present: z.array(ArtifactPurposeSchema), missing: z.array(ArtifactPurposeSchema) })
  .meta({ id: 'StudyRequiredArtifacts' });

export const StudyQuoteSchema = z
  .object({
    id: UuidSchema,
    studyId: UuidSchema.optional(),
    sampleSize: z.number().int(),
    amountMinor: z.number().int().min(0),
    currency: z.literal('GBP'),
  })
  .meta({ id: 'StudyQuote' });

export const StudyEnvelope = z
  .object({
    study: z.object({
      id: UuidSchema,
      name: z.string(),
      campaignId: UuidSchema.nullable(),
      revision: z.number().int().min(1),
      connectionRevision: z.number().int().min(0).nullable(),
      status: z.string().min(1),
      quotes: z.array(StudyQuoteSchema),
      approvals: z.array(
        z.object({ id: UuidSchema, quoteId: UuidSchema, fundedMinor: z.number().int().min(0), approvedBy: z.string(), used: z.boolean() }),
      ),
      artifacts: z.array(StudyArtifactSchema),
      requiredArtifacts: RequiredArtifactsSchema,
      createdAt: DateTimeSchema,
    }),
  })
  .meta({ id: 'StudyEnvelope' });

export const StudyApprovalEnvelope = z
  .object({
    approval: z.object({
      id: UuidSchema,
      studyId: UuidSchema,
      quoteId: UuidSchema,
      fundedMinor: z.number().int().min(0),
      currency: z.literal('GBP'),
      used: z.boolean(),
    }),
  })
  .meta({ id: 'StudyApprovalEnvelope' });

export const ArtifactUploadedEnvelope = z
  .object({ artifact: StudyArtifactSchema, requiredArtifacts: RequiredArtifactsSchema })
  .meta({ id: 'StudyArtifactUploaded' });
