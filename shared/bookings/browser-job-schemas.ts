import { z } from 'zod';

const Digest = z.string().regex(/^[a-f0-9]{64}$/);
const DateTime = z.iso.datetime({ offset: true });

/** Spec 13's body: every field required, no other keys. */
export const BrowserJobRequestSchema = z
  .strictObject({
    channelCampaignId: z.string().min(1).max(200),
    purpose: z.enum(['observe', 'prepare']),
    supplierUrl: z.url().max(2000),
    expectedSnapshotDigest: Digest,
    readOnlyConfirmed: z.literal(true),
  })
  .meta({ id: 'BrowserJobRequest' });
export type BrowserJobRequest = z.infer<typeof BrowserJobRequestSchema>;

export const BROWSER_JOB_STATUSES = ['queued', 'running', 'completed', 'failed'] as const;
export type BrowserJobStatus = (typeof BROWSER_JOB_STATUSES)[number];

/** A stored artifact: its public content-addressed URL and the SHA-256 of its bytes. */
const Artifact = z.object({
  url: z.string().min(1),
  sha256: Digest,
  bytes: z.number().int().min(0),
  contentType: z.string().min(1),
});

/** One line of a preparation worksheet: a detail of the approved snapshot, and the page's field it goes in (if one was found). */
export const WorksheetRowSchema = z.object({
  detail: z.string().min(1),
  value: z.string(),
  field: z.string().nullable(),
});
export type WorksheetRow = z.infer<typeof WorksheetRowSchema>;

/** A request the page made that the browser worker refused, and why. */
export const RefusedRequestSchema = z.object({ method: z.string(), url: z.string(), reason: z.string() });
export type RefusedRequest = z.infer<typeof RefusedRequestSchema>;

/**
 * What a completed job brought back, bound to the line and the approved snapshot. `digest` is the
 * SHA-256 of the canonical JSON of every other field: what staff cite.
 */
export const BrowserEvidenceSchema = z
  .object({
    digest: Digest,
    bookingId: z.string().min(1),
    lineId: z.string().min(1),
    snapshotDigest: Digest,
    lineTermsDigest: Digest,
    purpose: z.enum(['observe', 'prepare']),
    requestedUrl: z.string(),
    finalUrl: z.string(),
    httpStatus: z.number().int().nullable(),
    title: z.string(),
    observedAt: DateTime,
    screenshot: Artifact.extend({ width: z.number().int(), height: z.number().int(), truncated: z.boolean() }),
    text: Artifact.extend({ characters: z.number().int().min(0), truncated: z.boolean() }),
    requests: z.object({
      made: z.number().int().min(0),
      bytes: z.number().int().min(0),
      refused: z.array(RefusedRequestSchema),
    }),
    /** `prepare` only: the approved snapshot's details, each beside the page's field it goes in. */
    worksheet: z.object({ sha256: Digest, rows: z.array(WorksheetRowSchema) }).nullable(),
  })
  .meta({ id: 'BrowserEvidence' });
export type BrowserEvidence = z.infer<typeof BrowserEvidenceSchema>;

export const BrowserJobSchema = z
  .object({
    id: z.string().min(1),
    advertiserId: z.string().min(1),
    campaignId: z.string().min(1),
    bookingId: z.string().min(1),
    lineId: z.string().min(1),
    channelCampaignId: z.string().min(1),
    purpose: z.enum(['observe', 'prepare']),
    supplierUrl: z.string(),
    status: z.enum(BROWSER_JOB_STATUSES),
    snapshotDigest: Digest,
    /** Null only for intents recorded before jobs were run. */
    lineTermsDigest: Digest.nullable(),
    requestedBy: z.string().min(1),
    createdAt: DateTime,
    startedAt: DateTime.nullable(),
    finishedAt: DateTime.nullable(),
    failure: z.object({ code: z.string().min(1), reason: z.string() }).nullable(),
    evidence: BrowserEvidenceSchema.nullable(),
    /** Where to read the job. */
    href: z.string().min(1),
  })
  .meta({ id: 'BrowserJob' });
export type BrowserJob = z.infer<typeof BrowserJobSchema>;

export const BrowserJobEnvelope = z.strictObject({ browserJob: BrowserJobSchema }).meta({ id: 'BrowserJobEnvelope' });
export const BrowserJobList = z.strictObject({ browserJobs: z.array(BrowserJobSchema) }).meta({ id: 'BrowserJobList' });
